import Foundation
import Vapor

/// The web app's languages. English and French from the first page: the client of seed 004 writes French.
enum Lang: String, Sendable, CaseIterable {
    case en, fr

    /// The visitor's choice (cookie), else the browser's first language we have, else English.
    static func choose(_ req: Request) -> Lang {
        if let raw = req.cookies[WebContext.langCookie(req)]?.string, let lang = Lang(rawValue: raw) { return lang }
        for part in (req.headers.first(name: .acceptLanguage) ?? "").split(separator: ",") {
            let tag = part.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            if let lang = Lang(rawValue: String(tag.prefix(2))) { return lang }
        }
        return .en
    }
}

/// One entry of the catalogue (`Catalogue.swift`): the same text in each language. `%@` marks
/// where arguments go, in order.
struct Text: Sendable {
    let en: String
    let fr: String

    init(_ en: String, _ fr: String) {
        self.en = en
        self.fr = fr
    }

    func `in`(_ lang: Lang) -> String { lang == .fr ? fr : en }

    func format(_ lang: Lang, _ args: [String]) -> String {
        var text = self.in(lang)
        for arg in args {
            guard let range = text.range(of: "%@") else { break }
            text.replaceSubrange(range, with: arg)
        }
        return text
    }
}
