import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let rateShipment = WebPath<OrderID>("/orders/:id/ratings") { [$0.uuidString] }
    static let ratingResponse = WebPath<(OrderID, RatingID)>("/orders/:id/ratings/:rating/response") { [$0.0.uuidString, $0.1.uuidString] }
}

/// Ratings in the web app: on a delivered shipment's page, a form per party the person may still
/// rate, their own rating while it waits for the other side, the published ones with their answers.
/// The service is `Ratings`; the rules `RatingPolicy`.
struct RatingPages {
    func register(_ routes: any RoutesBuilder) {
        routes.post(WebRoutes.rateShipment, use: rate)
        routes.post(WebRoutes.ratingResponse, use: respond)
    }

    func rate(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        guard let form = try? req.content.decode(RatingForm.self) else { throw WaybillError.validation("stars", "invalid") }
        guard let stars = form.stars.flatMap({ Int($0) }) else { throw WaybillError.validation("stars", "required") }
        let ratee = form.rateeId.flatMap(UserID.init(uuidString:))
        _ = try await Ratings(request: req).rate(shipment: id, ratee: ratee, RatingDraft(stars: stars, tags: form.tags ?? [], comment: form.comment,
                                                                                      privateNote: form.privateNote), by: me)
        return req.redirect(to: WebRoutes.order(id, query: "rated=1") + "#ratings", redirectType: .normal)
    }

    func respond(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let rating: RatingID = try WebRoutes.id(req, "rating")
        _ = try await Ratings(request: req).respond(rating, text: try AccountPages.form(req)["text"] ?? "", by: me)
        return req.redirect(to: WebRoutes.order(id) + "#ratings", redirectType: .normal)
    }

    /// The form: `tags[]` once per ticked box.
    struct RatingForm: Content {
        var stars: String?
        var rateeId: String?
        var tags: [String]?
        var comment: String?
        var privateNote: String?
    }

    static func stars(_ n: Int) -> String { String(repeating: "★", count: max(0, min(5, n))) + String(repeating: "☆", count: max(0, 5 - n)) }

    /// The ratings section of a shipment's page.
    static func section(_ ctx: WebContext, order: OrderID, ratings: Ratings.ShipmentRatings, me: UserID, justRated: Bool) throws -> String {
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        var blocks: [String] = []
        if justRated { blocks.append("<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.ratingSaved)))</div>") }
        for (direction, ratee) in ratings.open {
            let choices = (1...5).reversed().map { n in
                "<label class=\"star\"><input type=\"radio\" name=\"stars\" value=\"\(n)\" required> \(h(Self.stars(n))) <span class=\"hint\">\(n)</span></label>"
            }.joined()
            let tags = direction.tags.map { tag in
                "<label><input type=\"checkbox\" name=\"tags[]\" value=\"\(h(tag))\"> \(h(ctx.t(.ratingTag(tag))))</label>"
            }.joined(separator: " ")
            let rateeID = try ratee.storedID
            let key = rateeID.uuidString.prefix(8)
            blocks.append("""
                <form method="post" action="\(WebRoutes.rateShipment(order))" class="stack rating-form">\(csrf)
                <input type="hidden" name="rateeId" value="\(rateeID.uuidString)">
                <fieldset><legend>\(h(ctx.t(.rateWho, ratee.firstName)))</legend>\(choices)</fieldset>
                <fieldset><legend>\(h(ctx.t(.ratingTags)))</legend>\(tags)</fieldset>
                <div class="field"><label for="comment-\(key)">\(h(ctx.t(.ratingComment)))</label><textarea id="comment-\(key)" name="comment" rows="2" maxlength="\(RatingDraft.maxTextLength)"></textarea></div>
                <div class="field"><label for="note-\(key)">\(h(ctx.t(.ratingPrivateNote, ratee.firstName)))</label><textarea id="note-\(key)" name="privateNote" rows="2" maxlength="\(RatingDraft.maxTextLength)"></textarea></div>
                <button type="submit" class="primary">\(h(ctx.t(.sendRating)))</button></form>
                """)
        }
        for view in ratings.ratings {
            let r = view.record, ratingID = try r.storedID
            let who = r.reviewerID == me ? ctx.t(.you) : view.reviewerName
            let whom = r.rateeID == me ? ctx.t(.you) : (view.rateeName ?? r.carrier ?? "")
            var text = "<p><strong>\(h(ctx.t(.ratedBy, who, whom)))</strong> <span class=\"stars\" aria-label=\"\(h(ctx.t(.starsOutOfFive, String(r.stars))))\">\(Self.stars(r.stars))</span></p>"
            if !r.tags.isEmpty { text += "<p class=\"hint\">\(h(r.tags.map { ctx.t(.ratingTag($0)) }.joined(separator: " · ")))</p>" }
            if let comment = r.comment { text += "<blockquote>\(h(comment))</blockquote>" }
            if view.showsPrivateNote, let note = r.privateNote { text += "<p class=\"hint\">\(h(ctx.t(.privateNoteShown))) \(h(note))</p>" }
            if r.status == .pending { text += "<p class=\"hint\">\(h(ctx.t(.ratingPending, ctx.time(r.windowClosesAt, dateOnly: true))))</p>" }
            if let response = r.response { text += "<p><em>\(h(ctx.t(.ratingAnswer, view.rateeName ?? "")))</em> \(h(response))</p>" }
            else if view.mayAnswer {
                text += """
                    <form method="post" action="\(WebRoutes.ratingResponse((order, ratingID)))" class="stack">\(csrf)
                    <div class="field"><label for="answer-\(ratingID.uuidString.prefix(8))">\(h(ctx.t(.answerRating)))</label>
                    <textarea id="answer-\(ratingID.uuidString.prefix(8))" name="text" rows="2" maxlength="\(RatingDraft.maxTextLength)" required></textarea></div>
                    <button type="submit" class="secondary">\(h(ctx.t(.sendAnswer)))</button></form>
                    """
            }
            blocks.append("<div class=\"rating\">\(text)</div>")
        }
        if blocks.isEmpty { return "" }
        return "<section id=\"ratings\"><h2>\(h(ctx.t(.ratings)))</h2>\(blocks.joined(separator: "\n"))</section>"
    }
}
