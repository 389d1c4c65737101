import FluentKit
import Foundation
import Testing
@testable import WaybillServer

/// Every model lists its properties for Fluent instead of letting it find them by reflection for
/// every row read and every save (`Mirror` was a tenth of creating an order); the list must be
/// exactly what the class declares. The models are found in the sources, not listed here.
@Suite("Models list exactly the properties they declare")
struct ModelPropertiesTests {
    static func declared(_ model: AnyObject) -> [ObjectIdentifier] {
        Mirror(reflecting: model).children.compactMap { ($0.value as? any AnyProperty).map { ObjectIdentifier($0 as AnyObject) } }
    }

    /// The name of every class declared `: Model` or `: Fields` under Sources/WaybillServer.
    static func declaredInSources() throws -> Set<String> {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/WaybillServer")
        var names = Set<String>()
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "<" || $0 == ":" || $0 == "," }).map(String.init)
                guard let at = words.firstIndex(of: "class"), at > 0, words[at - 1] == "final", at + 1 < words.count,
                      words[(at + 2)...].prefix(3).contains(where: { $0 == "Model" || $0 == "Fields" }) else { continue }
                names.insert(words[at + 1])
            }
        }
        return names
    }

    @Test("Every model declared in the sources is in StoredModels.all")
    func everyModelIsListed() throws {
        let listed = Set(StoredModels.all.map { String(describing: $0).prefix { $0 != "<" }.description })
        let declared = try Self.declaredInSources()
        #expect(declared.count >= 50, "the scan finds the models")
        #expect(declared.subtracting(listed).isEmpty, "missing from StoredModels.all: \(declared.subtracting(listed).sorted())")
        #expect(listed.subtracting(declared).isEmpty)
    }

    @Test("Every model: every declared property once, in declaration order")
    func listsMatchDeclarations() {
        for type in StoredModels.all {
            let model = type.init()
            let listed = model.properties.map { ObjectIdentifier($0 as AnyObject) }
            #expect(listed == Self.declared(model), "\(type)")
            #expect(listed.count >= 2, "\(type): an id and a field at least")
        }
    }
}
