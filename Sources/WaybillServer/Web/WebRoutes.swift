import Foundation
import Vapor
import WaybillCore

/// A path of the web app, spelled once. Links, form actions and redirects are built from it
/// (`WebRoutes.order(id)`), and the route is registered from the same spelling
/// (`routes.get(WebRoutes.order, use: show)`), so a link and the handler it reaches cannot drift
/// apart, and a link needs the right kind of id (an `OrderID` where an order is meant).
struct WebPath<Parameters: Sendable>: Sendable {
    /// The pattern, with `:name` for each parameter: "/orders/:id".
    let template: String
    private let values: @Sendable (Parameters) -> [String]

    init(_ template: String, _ values: @escaping @Sendable (Parameters) -> [String]) {
        self.template = template
        self.values = values
    }

    /// The path with the parameters filled in.
    func callAsFunction(_ parameters: Parameters, query: String? = nil) -> String {
        var filled = values(parameters).makeIterator()
        let path = "/" + components.map { component -> String in
            if case .parameter = component, let value = filled.next() { return value }
            return component.description
        }.joined(separator: "/")
        return query.map { path + "?" + $0 } ?? path
    }

    /// What Vapor matches.
    var components: [PathComponent] {
        template.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
    }
}

extension WebPath where Parameters == Void {
    init(_ template: String) { self.init(template) { _ in [] } }

    func callAsFunction(query: String? = nil) -> String { query.map { template + "?" + $0 } ?? template }
}

/// An id in a path: its UUID, as the pages have always written it.
private func text<Tag>(_ id: Tagged<Tag, UUID>) -> String { id.uuidString }

/// Every page and form target of the web app.
enum WebRoutes {
    // Accounts
    static let home = WebPath("/")
    static let login = WebPath("/login")
    static let logout = WebPath("/logout")
    static let register = WebPath("/register")
    static let verify = WebPath("/verify")
    static let resendCode = WebPath("/verify/resend")
    static let forgot = WebPath("/forgot")
    static let reset = WebPath("/reset")
    static let account = WebPath("/account")
    static let accountPassword = WebPath("/account/password")
    static let language = WebPath<Lang>("/lang/:lang") { [$0.rawValue] }
    static let notifications = WebPath("/notifications")
    static let readAllNotifications = WebPath("/notifications/read-all")
    static let readNotification = WebPath<NotificationID>("/notifications/:id/read") { [text($0)] }
    static let offline = WebPath("/offline")

    // Orders
    static let orders = WebPath("/orders")
    static let newOrder = WebPath("/orders/new")
    static let order = WebPath<OrderID>("/orders/:id") { [text($0)] }
    static let orderFile = WebPath<(OrderID, FileID)>("/orders/:id/files/:file") { [text($0.0), text($0.1)] }
    static let cancelOrder = WebPath<OrderID>("/orders/:id/cancel") { [text($0)] }
    static let renewTrackingLink = WebPath<OrderID>("/orders/:id/tracking-link") { [text($0)] }
    static let revokeTrackingLink = WebPath<OrderID>("/orders/:id/tracking-link/revoke") { [text($0)] }
    static let statements = WebPath("/statements")
    /// Shipments addressed to the account's verified email, and the receiver's confirmation.
    static let incoming = WebPath("/incoming")
    static let confirmReceipt = WebPath<OrderID>("/orders/:id/receipt") { [text($0)] }
    /// A printable monthly statement behind a signed one-hour link (`PaymentPages`).
    static let statement = WebPath<String>("/statements/:token") { [$0] }
    /// Stripe's (or the sandbox's) way back after a checkout (`PaymentPages`).
    static let paymentReturn = WebPath("/payments/return")
    /// The test payment page used when no Stripe keys are configured, and its two buttons.
    static let sandboxCheckout = WebPath<String>("/sandbox/checkout/:id") { [$0] }
    static let sandboxPay = WebPath<String>("/sandbox/checkout/:id/pay") { [$0] }
    static let sandboxCancel = WebPath<String>("/sandbox/checkout/:id/cancel") { [$0] }
    /// The sandbox's test onboarding for a traveller's payout account.
    static let sandboxConnect = WebPath<String>("/sandbox/connect/:id") { [$0] }
    static let sandboxConnectComplete = WebPath<String>("/sandbox/connect/:id/complete") { [$0] }
    /// The sandbox's stand-in for Stripe Billing (a subscription's checkout and later life).
    static let sandboxSubscription = WebPath<String>("/sandbox/subscription/:id") { [$0] }
    static let sandboxSubscriptionAct = WebPath<(String, String)>("/sandbox/subscription/:id/:action") { [$0.0, $0.1] }
    /// The public tracking page of an order's link (`TrackingPage`).
    static let trackingPage = WebPath<String>("/t/:token") { [$0] }
    /// What a parcel's label QR code opens: the hand-over of that parcel (`HandoverPages`).
    static let handover = WebPath<String>("/h/:token") { [$0] }
    static let orderLabel = WebPath<OrderID>("/orders/:id/label.pdf") { [$0.uuidString] }
    static let labelsPDF = WebPath("/dispatch/labels.pdf")
    /// The public page of a followed parcel's link (`SharedParcelPage`).
    static let sharedParcel = WebPath<String>("/p/:token") { [$0] }

    // Drivers
    static let driverDay = WebPath("/driver")
    static let driverMap = WebPath("/driver/map")
    static let driverDuty = WebPath("/driver/duty")
    static let accept = WebPath<OrderID>("/driver/orders/:id/accept") { [text($0)] }
    static let pickup = WebPath<OrderID>("/driver/orders/:id/pickup") { [text($0)] }
    static let deliver = WebPath<OrderID>("/driver/orders/:id/deliver") { [text($0)] }
    static let fail = WebPath<OrderID>("/driver/orders/:id/fail") { [text($0)] }
    /// A driver's step as the offline queue sends it (JSON answers): accept, pickup, deliver, fail.
    static let queuedStep = WebPath<(OrderID, OrderAction)>("/app/orders/:id/steps/:action") { [text($0.0), $0.1.rawValue] }

    // Dispatch and administration
    static let dispatch = WebPath("/dispatch")
    static let assign = WebPath<OrderID>("/dispatch/:id/assign") { [text($0)] }
    static let fleet = WebPath("/fleet")
    static let users = WebPath("/users")
    static let resetUser = WebPath<UserID>("/users/:id/reset") { [text($0)] }
    static let disableUser = WebPath<UserID>("/users/:id/disable") { [text($0)] }
    static let enableUser = WebPath<UserID>("/users/:id/enable") { [text($0)] }
    /// One person: their capabilities, the restriction in force and its history.
    static let user = WebPath<UserID>("/users/:id") { [text($0)] }
    static let userCapabilities = WebPath<UserID>("/users/:id/capabilities") { [text($0)] }
    static let restrictUser = WebPath<UserID>("/users/:id/restrictions") { [text($0)] }
    static let liftRestriction = WebPath<(UserID, Int)>("/users/:id/restrictions/:restriction/lift") { [text($0.0), String($0.1)] }
    static let tariff = WebPath("/tariff")

    /// The typed id a route's `:id` (or another parameter) names; 404 when it is not one.
    static func id<Tag>(_ req: Request, _ name: String = "id") throws -> Tagged<Tag, UUID> {
        guard let id = req.parameters.get(name).flatMap(Tagged<Tag, UUID>.init(uuidString:)) else { throw WaybillError.notFound }
        return id
    }
}

extension RoutesBuilder {
    @discardableResult
    func get<P>(_ path: WebPath<P>, use handler: @escaping @Sendable (Request) async throws -> Response) -> Route {
        on(.GET, path.components, use: handler)
    }

    @discardableResult
    func post<P>(_ path: WebPath<P>, use handler: @escaping @Sendable (Request) async throws -> Response) -> Route {
        on(.POST, path.components, use: handler)
    }
}

/// Percent-encodes a value for a query string.
func queryValue(_ value: String) -> String {
    value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
}
