import Foundation
import Testing
import Vapor
@testable import WaybillServer

extension HTTPMediaType {
    /// Whether Vapor reads `value` as application/json.
    static func vaporReadsAsJSON(_ value: String) -> Bool {
        var headers = HTTPHeaders()
        headers.add(name: .contentType, value: value)
        guard let type = headers.contentType else { return false }
        return type.type == "application" && type.subType == "json"
    }
}

@Suite("Request bodies are read as JSON exactly as RFC 8259 says")
struct JSONBodyParsingTests {
    static func parse(_ text: String) -> JSONValue? {
        Array(text.utf8).withUnsafeBytes { JSONValue.parse($0) }
    }

    @Test("A body plainly declared as application/json is recognised at once, as Vapor reads it; other spellings are left to Vapor")
    func contentTypeNamesJSON() {
        for value in ["application/json", "application/json; charset=utf-8", " application/json ;charset=UTF-8",
                      "application/json;", "\tapplication/json"] {
            #expect(SpecValidationMiddleware.namesJSON(value), "\(value)")
            #expect(HTTPMediaType.vaporReadsAsJSON(value), "\(value)")
        }
        for value in ["Application/JSON", "application/jsonx", "application/xml", "text/json", "application/json-patch+json", "application", "",
                      "application/jsoN\u{301}", "applicatioN/jso", "multipart/form-data; boundary=x"] {
            #expect(!SpecValidationMiddleware.namesJSON(value), "\(value)")
        }
    }

    @Test("Valid documents give the same values JSONDecoder gives")
    func sameAsFoundation() throws {
        let documents = [
            #"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#,
            #"  [ -0, 0.5, -12.25e3, 1E-2, 9007199254740993, 12345678901234567890 ] "#,
            #""caf\u00e9 \ud83d\ude9a \"quoted\" \\ \/ \b\f\n\r\t""#,
            #"{"dup": 1, "dup": 2}"#,
            "\"Zürich 🚚\"",
            "[]", "{}", "0", "true", "null",
            #"{"pickup": {"street": "Bahnhofplatz 1", "latitude": 47.3779, "longitude": 8.5403}, "weightClass": "small"}"#,
        ]
        for document in documents {
            let ours = try #require(Self.parse(document), "\(document)")
            let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(document.utf8))
            #expect(ours == foundation, "\(document)")
        }
        #expect(Self.parse(#""\ud83d\ude9a""#) == .string("🚚"))
        #expect(Self.parse(#"{"dup": 1, "dup": 2}"#) == .object(["dup": .number(1)]),
                "the first of a repeated name counts, as for the decoder that reads the body after the check")
    }

    @Test("Anything that is not JSON is refused, never half-read")
    func refusals() {
        let bad = [
            "", " ", "{", "}", "[1,]", "[1 2]", #"{"a" 1}"#, #"{"a":1,}"#, #"{a: 1}"#, "01", "1.", ".5", "-", "1e", "+1",
            "tru", "nul", "[true false]", #""unterminated"#, "\"tab\there\"", #""\x""#, #""\u12""#, #""\ud83d""#, #""\ude9a""#,
            #""\ud83d\u0041""#, "1e400", "-1e400", "{} {}", "[1] x", "\u{feff}{}", "NaN", "Infinity",
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ]
        for document in bad {
            #expect(Self.parse(document) == nil, "\(document.prefix(40))")
        }
        // Invalid UTF-8 inside a string.
        #expect([0x22, 0xC3, 0x28, 0x22].withUnsafeBytes { JSONValue.parse($0) } == nil)
        // Nesting up to the limit is fine.
        #expect(Self.parse(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)) != nil)
    }
}
