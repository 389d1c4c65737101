import FluentKit
import Foundation
import Testing
@testable import WaybillServer

/// `Order` and `User` list their properties for Fluent instead of letting it find them by
/// reflection for every row; the list must be exactly what the class declares.
@Suite("Models list exactly the properties they declare")
struct ModelPropertiesTests {
    static func declared(_ model: AnyObject) -> [ObjectIdentifier] {
        Mirror(reflecting: model).children.compactMap { ($0.value as? any AnyProperty).map { ObjectIdentifier($0 as AnyObject) } }
    }

    @Test("Order and User: every declared property once, in declaration order")
    func listsMatchDeclarations() {
        for model in [Order() as any Model, User() as any Model] {
            let listed = model.properties.map { ObjectIdentifier($0 as AnyObject) }
            #expect(listed == Self.declared(model), "\(type(of: model))")
            #expect(listed.count > 10)
        }
    }
}
