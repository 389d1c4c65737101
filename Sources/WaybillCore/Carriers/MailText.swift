import Foundation

/// The readable text of a forwarded email (RFC 5322 with MIME): who it was addressed to, its
/// subject, and its text parts decoded (quoted-printable, base64; HTML with its tags taken out), so
/// the tracking numbers in a shop's shipping confirmation can be found (issue "Parcels of every
/// carrier", item 8). Never traps on what comes in; reads at most 2 MB and 50 parts.
public enum MailText {
    public struct Message: Sendable, Equatable {
        /// Addresses of To, Cc, Delivered-To, X-Original-To and Envelope-To, lowercased.
        public var recipients: [String]
        public var subject: String?
        public var text: String
    }

    public static func read(_ raw: String) -> Message {
        let limited = String(raw.prefix(2_000_000)).replacingOccurrences(of: "\r\n", with: "\n")
        let (headers, body) = split(limited)
        var recipients: [String] = []
        for name in ["to", "cc", "delivered-to", "x-original-to", "envelope-to"] {
            for value in headers[name] ?? [] { recipients += addresses(in: value) }
        }
        var parts = 0
        let text = content(headers: headers, body: body, depth: 0, parts: &parts)
        return Message(recipients: Array(NSOrderedSet(array: recipients).array as? [String] ?? recipients),
                       subject: headers["subject"]?.first.map { String($0.prefix(200)) }, text: String(text.prefix(100_000)))
    }

    /// Headers (names lowercased, folded lines joined) and the body after the first empty line.
    static func split(_ message: String) -> (headers: [String: [String]], body: String) {
        let (head, body): (Substring, Substring)
        if let range = message.range(of: "\n\n") { (head, body) = (message[..<range.lowerBound], message[range.upperBound...]) }
        else { (head, body) = (Substring(message), "") }
        var headers: [String: [String]] = [:]
        var current: (String, String)?
        func flush() { if let (name, value) = current { headers[name, default: []].append(value.trimmingCharacters(in: .whitespaces)) } }
        for line in head.split(separator: "\n", omittingEmptySubsequences: false).prefix(500) {
            if line.first == " " || line.first == "\t", let (name, value) = current {
                current = (name, value + " " + line.trimmingCharacters(in: .whitespaces))
            } else if let colon = line.firstIndex(of: ":") {
                flush()
                current = (line[..<colon].lowercased().trimmingCharacters(in: .whitespaces), String(line[line.index(after: colon)...]))
            }
        }
        flush()
        return (headers, String(body))
    }

    static func addresses(in value: String) -> [String] {
        let pattern = /[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}/
        return value.matches(of: pattern).prefix(50).map { String($0.output).lowercased() }
    }

    /// A header parameter (`boundary`, `charset`) of a value such as `multipart/mixed; boundary="x"`.
    static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == name { return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return nil
    }

    static func content(headers: [String: [String]], body: String, depth: Int, parts: inout Int) -> String {
        let type = headers["content-type"]?.first ?? "text/plain"
        let kind = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "text/plain"
        if kind.hasPrefix("multipart/"), depth < 5, let boundary = parameter("boundary", in: type), !boundary.isEmpty {
            var texts: [String] = []
            for piece in body.components(separatedBy: "--" + boundary).dropFirst() {
                parts += 1
                guard parts <= 50, !piece.hasPrefix("--") else { break }
                let part = split(String(piece.drop { $0 == "\n" }))
                texts.append(content(headers: part.headers, body: part.body, depth: depth + 1, parts: &parts))
            }
            return texts.filter { !$0.isEmpty }.joined(separator: "\n")
        }
        guard kind.hasPrefix("text/") || kind == "message/rfc822" else { return "" }
        if kind == "message/rfc822", depth < 5 {
            let inner = split(body)
            return content(headers: inner.headers, body: inner.body, depth: depth + 1, parts: &parts)
        }
        let encoding = headers["content-transfer-encoding"]?.first?.lowercased().trimmingCharacters(in: .whitespaces) ?? "7bit"
        let data: Data = switch encoding {
        case "base64": Data(base64Encoded: body.filter { !$0.isWhitespace }) ?? Data()
        case "quoted-printable": quotedPrintable(body)
        default: Data(body.utf8)
        }
        let charset = parameter("charset", in: type)?.lowercased()
        let text = String(data: data, encoding: charset == "iso-8859-1" || charset == "latin1" || charset == "windows-1252" ? .isoLatin1 : .utf8)
            ?? String(decoding: data, as: UTF8.self)
        return kind == "text/html" ? stripHTML(text) : text
    }

    static func quotedPrintable(_ text: String) -> Data {
        var bytes: [UInt8] = []
        let input = Array(text.utf8)
        var i = 0
        while i < input.count {
            if input[i] == UInt8(ascii: "="), i + 1 < input.count {
                if input[i + 1] == UInt8(ascii: "\n") { i += 2; continue } // soft line break
                if i + 2 < input.count, let byte = UInt8(String(decoding: input[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                    bytes.append(byte)
                    i += 3
                    continue
                }
            }
            bytes.append(input[i])
            i += 1
        }
        return Data(bytes)
    }

    /// Tags out (block tags become line breaks), a few entities decoded; scripts and styles dropped.
    static func stripHTML(_ html: String) -> String {
        var text = html.replacing(/(?is)<(script|style)[^>]*>.*?<\/\1>/, with: " ")
        text = text.replacing(/(?i)<(br|\/p|\/div|\/tr|\/li|\/h[1-6])[^>]*>/, with: "\n")
        text = text.replacing(/<[^>]*>/, with: " ")
        for (entity, character) in [("&nbsp;", " "), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'")] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text
    }
}
