import FluentKit
import Foundation
import WaybillCore

/// The ways the server's code gets a value it is sure of without trapping (issue 50: nothing on a
/// request's path may end the process). Where the certainty is wrong, that one request fails with a
/// 500 and standard error (the server's log) names what was missing; every other request goes on.
extension WaybillError {
    /// A fault of the server's own making: an answer it cannot form. The client sees the generic
    /// internal error; the log gets `what`.
    static func inconsistent(_ what: String) -> WaybillError {
        FileHandle.standardError.write(Data("internal inconsistency: \(what)\n".utf8))
        return WaybillError(.internalServerError, .internalError, "Something went wrong on our side. Please try again.")
    }
}

/// Converts between two string enums that name the same values: a WaybillCore enum and its copy in
/// the API schema (generated), or back. Each pair is compared case by case in `WireEnumTests`, so the
/// throw is for a schema that fell behind, and costs one request, not the process.
func wire<To: RawRepresentable, From: RawRepresentable>(_ value: From, as: To.Type = To.self) throws -> To
where To.RawValue == String, From.RawValue == String {
    guard let converted = To(rawValue: value.rawValue) else {
        throw WaybillError.inconsistent("\(From.self).\(value.rawValue) has no \(To.self)")
    }
    return converted
}

extension Model {
    /// The id of a row read from or written to the database (where the id column is never empty).
    /// Throws, rather than traps, for a model that was never saved.
    var storedID: IDValue {
        get throws {
            guard let id else { throw WaybillError.inconsistent("\(Self.self) without an id") }
            return id
        }
    }
}
