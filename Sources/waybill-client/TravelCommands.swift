import ArgumentParser
import Foundation
import WaybillClient

// Travellers from the command line: areas, becoming a traveller, trips and finding them.

struct AreasCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "areas", abstract: "Find areas by the start of a name in any language, accents ignored (or a postal code).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "What to look for, such as genf or 1003.") var query: String
    @Option(help: "Name the areas in this language (fr, de, it, en).") var lang: String?
    @Option(help: "Only areas inside this one (an area id).") var within: String?
    @Option(help: "At most this many (1 to 50).") var limit: Int?

    func run() async throws {
        try await options.run { session in
            let areas = try await session.searchAreas(query, language: lang, within: within, limit: limit)
            if options.json { Output.json(areas); return }
            if areas.isEmpty { Output.line("No area matches.") }
            for a in areas {
                let path = a.path.map(\.name).joined(separator: ", ")
                Output.line("\(a.id)\t\(a.name) (\(a.level)\(path.isEmpty ? "" : ", \(path)"))")
            }
        }
    }
}

struct BecomeTraveller: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "become-traveller", abstract: "Accept the travellers' terms and carry parcels on your own trips.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let account = try await session.becomeTraveller()
            if options.json { Output.json(account) } else { Output.line("You are now a traveller: post a trip with `trip post`.") }
        }
    }
}

struct PayoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payouts", abstract: "Where you are paid as a traveller; --setup prints a link to set it up in a browser.")
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print a single-use link to set up (or finish setting up) your payout account.") var setup = false

    func run() async throws {
        try await options.run { session in
            if setup {
                let url = try await session.startPayoutOnboarding()
                if options.json { Output.json(["url": url.absoluteString]) } else { Output.line("Open this link in a browser within a few minutes: \(url.absoluteString)") }
                return
            }
            let account = try await session.payoutAccount()
            if options.json { Output.json(account) } else {
                Output.line("Payouts: \(account.status.rawValue)\(account.sandbox ? " (sandbox: no money moves)" : "")")
                if !account.requirementsDue.isEmpty { Output.line("Still needed: " + account.requirementsDue.joined(separator: ", ")) }
                if account.status != .active { Output.line("Set them up with `payouts --setup`.") }
            }
        }
    }
}

struct ParcelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parcel", abstract: "Parcels of other carriers.", subcommands: [Add.self, Import.self, List.self, Show.self, Share.self, Unshare.self, Link.self, Remove.self, Detect.self])

    static func line(_ p: FollowedParcel) -> String {
        "\(p.id)  \(p.number)  \(p.carrierName)\(p.pinned ? " (chosen)" : " (suggested)")  \(p.status.rawValue)\(p.name.map { "  \($0)" } ?? "")\(p.sharedBy.map { "  (shared by \($0))" } ?? "")"
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Follow a parcel by its tracking number (the carrier is suggested unless --carrier).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The tracking number (quote it if it has spaces).") var number: String
        @Option(help: "The carrier (dhl, ups, swiss_post, la_poste…) instead of the suggestion.") var carrier: String?
        @Option(help: "A name for the parcel.") var name: String?
        @Option(help: "Notes.") var notes: String?

        func run() async throws {
            try await options.run { session in
                let parcel = try await session.addParcel(ParcelDraft(number: number, carrier: carrier, name: name, notes: notes))
                if options.json { Output.json(parcel) } else { Output.line(ParcelCommand.line(parcel)) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Everything you follow — parcels of other carriers and Waybill shipments — most recently changed first.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "active (default), attention, delivered or all.") var filter: TrackedFilter = .active

        func run() async throws {
            try await options.run { session in
                let items = try await session.tracked(filter)
                if options.json { Output.json(items) } else {
                    if items.isEmpty { Output.line(filter == .active ? "Nothing on its way: `parcel add NUMBER` to follow one." : "Nothing here.") }
                    for i in items {
                        Output.line("\(i.id)  \(i.kind.rawValue)  \(i.number)  \(i.carrierName)  \(i.status.rawValue)\(i.name.map { "  \($0)" } ?? "")\(i.place.map { "  \(i.direction == .incoming ? "from" : "to") \($0)" } ?? "")\(i.sharedBy.map { "  (shared by \($0))" } ?? "")")
                    }
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One parcel, with the carriers its number may belong to.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The parcel's id.") var parcel: ParcelID

        func run() async throws {
            try await options.run { session in
                let p = try await session.parcel(parcel)
                if options.json { Output.json(p) } else {
                    Output.line(ParcelCommand.line(p))
                    if let url = p.trackingUrl { Output.line("At the carrier: \(url)") }
                    for e in p.events ?? [] { Output.line("  \(e.localTime)  \(e.status?.rawValue ?? e.code)  \(e.description)\(e.location.map { " — \($0)" } ?? "")") }
                    for c in p.candidates ?? [] { Output.line("  could be \(c.carrierName) — \(c.formatName) (\(c.reason.rawValue))") }
                    for person in p.sharedWith ?? [] { Output.line("  shared with \(person.name) (\(person.userId))") }
                    if let link = p.shareUrl { Output.line("  public link: \(link)") }
                }
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Follow every tracking number in a shipping confirmation read from standard input.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "A name for all of them (the shop, the order).") var name: String?

        func run() async throws {
            let text = Detect.readInput()
            try await options.run { session in
                let (added, skipped) = try await session.addParcels(fromText: text, name: name)
                if options.json { Output.json(added) } else {
                    for p in added { Output.line(ParcelCommand.line(p)) }
                    if !skipped.isEmpty { Output.line("Already followed: \(skipped.joined(separator: ", "))") }
                }
            }
        }
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Share a parcel with another Waybill account: it appears in their list.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The parcel's id.") var parcel: ParcelID
        @Argument(help: "The email of their Waybill account.") var email: String

        func run() async throws {
            try await options.run { session in
                let p = try await session.shareParcel(parcel, with: email)
                if options.json { Output.json(p) } else { Output.line("Shared with \((p.sharedWith ?? []).map(\.name).joined(separator: ", ")).") }
            }
        }
    }

    struct Unshare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop sharing a parcel with someone (their account id, from `parcel show`).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The parcel's id.") var parcel: ParcelID
        @Argument(help: "Their account id.") var user: UserID

        func run() async throws {
            try await options.run { session in
                try await session.unshareParcel(parcel, with: user)
                if options.json { Output.json(["unshared": user.uuidString]) } else { Output.line("No longer shared with them.") }
            }
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a public link to a parcel (a new one replaces the old), or withdraw it.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The parcel's id.") var parcel: ParcelID
        @Flag(help: "Withdraw the link instead.") var revoke = false

        func run() async throws {
            try await options.run { session in
                let p = revoke ? try await session.revokeParcelLink(parcel) : try await session.createParcelLink(parcel)
                if options.json { Output.json(p) } else { Output.line(p.shareUrl ?? "No link.") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop following a parcel (or leave one shared with you).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The parcel's id.") var parcel: ParcelID

        func run() async throws {
            try await options.run { session in
                try await session.removeParcel(parcel)
                if options.json { Output.json(["removed": parcel.uuidString]) } else { Output.line("No longer followed.") }
            }
        }
    }

    struct Detect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Suggest the carrier of tracking numbers (or of the numbers in text read from standard input with --text).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Tracking numbers (spaces inside a number: quote it).") var numbers: [String] = []
        @Flag(help: "Find the numbers in text read from standard input (a pasted shipping confirmation).") var text = false
        @Flag(help: "Decide here, without asking the server (the same table, in WaybillCore).") var offline = false

        func run() async throws {
            if offline {
                let detection = CarrierDetection.standard
                var found: [CarrierCandidate] = []
                if text { found = detection.numbers(in: Self.readInput()) }
                for number in numbers { found += detection.candidates(for: number) }
                if options.json { Output.json(found) } else {
                    for c in found { Output.line("\(c.number)\t\(c.carrierName) — \(c.formatName) (\(c.reason.rawValue))") }
                }
                return
            }
            try await options.run { session in
                var found: [CarrierSuggestion] = []
                if text { found = try await session.findTrackingNumbers(in: Self.readInput()) }
                for number in numbers { found += try await session.detectCarrier(number) }
                if options.json { Output.json(found) } else {
                    if found.isEmpty { Output.line("No known carrier.") }
                    for c in found { Output.line("\(c.number)\t\(c.carrierName) — \(c.formatName) (\(c.reason.rawValue))") }
                }
            }
        }

        static func readInput() -> String {
            var lines: [String] = []
            while let line = readLine(strippingNewline: false), lines.count < 2_000 { lines.append(line) }
            return String(lines.joined().prefix(20_000))
        }
    }
}

struct FindTrips: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find-trips", abstract: "Trips that can carry your parcel, best first, with the price.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "From this area (an id from `areas`), or any area inside it.") var from: String
    @Option(help: "To this area, or any area inside it.") var to: String
    @Option(help: "The parcel's category (see `trip categories`).") var category: String
    @Option(help: "Its weight in grams.") var grams: Int
    @Option(help: "At most this many.") var limit: Int?

    func run() async throws {
        try await options.run { session in
            let matches = try await session.findTrips(from: from, to: to, category: category, grams: grams, limit: limit)
            if options.json { Output.json(matches); return }
            if matches.isEmpty { Output.line("No trip matches yet.") }
            for m in matches {
                let t = m.trip
                Output.line("\(t.id)\t\(t.from.name) → \(t.to.name)\t\(t.date) \(t.earliest)–\(t.latest) (\(t.timeZone))\t\(t.traveller.name)\t\(m.price.total.money)")
            }
        }
    }
}

struct TripCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trip", abstract: "Post, list, show and cancel your trips (travellers); list the categories and prices.",
        subcommands: [Post.self, List.self, Show.self, Cancel.self, Categories.self])

    struct Post: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Post a trip you make anyway, with room for parcels.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "From this area (an id from `areas`).") var from: String
        @Option(help: "To this area.") var to: String
        @Option(help: "Local date of departure, YYYY-MM-DD.") var date: String
        @Option(help: "Earliest departure, HH:MM local time.") var earliest: String
        @Option(help: "Latest departure, HH:MM local time.") var latest: String
        @Option(help: "IANA time zone (default: this machine's).") var timeZone: String = TimeZone.current.identifier
        @Option(help: "Room in grams.") var grams: Int
        @Option(help: "Room in parcels.") var parcels: Int = 1
        @Option(help: "A category you take (repeatable).") var category: [String]
        @Option(help: "The least you accept per parcel, in minor units (centimes).") var minimumReward: Int?
        @Option(help: "Notes for senders.") var notes: String?

        func run() async throws {
            try await options.run { session in
                let trip = try await session.postTrip(TripDraft(
                    from: AreaID(from), to: AreaID(to), date: date, earliest: earliest, latest: latest, timeZone: timeZone, capacityGrams: grams,
                    capacityParcels: parcels, categories: category, minimumReward: minimumReward, notes: notes))
                if options.json { Output.json(trip) } else { Output.line("Posted trip \(trip.id): \(trip.from.name) → \(trip.to.name) on \(trip.date).") }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your trips, those still to leave first.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let trips = try await session.myTrips()
                if options.json { Output.json(trips); return }
                if trips.isEmpty { Output.line("No trips yet.") }
                for t in trips {
                    Output.line("\(t.id)\t\(t.status.rawValue)\t\(t.from.name) → \(t.to.name)\t\(t.date) \(t.earliest)–\(t.latest)\t\(t.gramsLeft) g, \(t.parcelsLeft) parcels left")
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one trip.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The trip's id.") var trip: TripID

        func run() async throws {
            try await options.run { session in
                let t = try await session.trip(trip)
                if options.json { Output.json(t); return }
                Output.line("""
                    \(t.from.name) → \(t.to.name), \(t.status.rawValue)
                    Leaves \(t.date) between \(t.earliest) and \(t.latest) (\(t.timeZone)), with \(t.traveller.name)
                    Room: \(t.gramsLeft) of \(t.capacityGrams) g, \(t.parcelsLeft) of \(t.capacityParcels) parcels; takes \(t.categories.joined(separator: ", "))
                    """)
                if let notes = t.notes { Output.line("Notes: \(notes)") }
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel one of your trips.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The trip's id.") var trip: TripID

        func run() async throws {
            try await options.run { session in
                let t = try await session.cancelTrip(trip)
                if options.json { Output.json(t) } else { Output.line("Trip \(t.id) cancelled.") }
            }
        }
    }

    struct Categories: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What travellers carry, at what price, and what may not be sent.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let t = try await session.travelTariff()
                if options.json { Output.json(t); return }
                for c in t.categories {
                    Output.line("\(c.id)\t\(c.names.additionalProperties["en"] ?? c.id)\t\(Money(c.basePrice, t.currency)) + \(Money(c.pricePerKg, t.currency))/kg beyond the first, up to \(c.maxGrams) g")
                }
                Output.line("Platform fee: \(t.platformFeePercent) %. Never sent: " + (t.prohibitedItems.additionalProperties["en"] ?? []).joined(separator: "; "))
            }
        }
    }
}

struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Ask a traveller to carry a parcel, and follow requests: send, list, show, accept, reject, cancel, pickup, deliver.",
        subcommands: [Send.self, List.self, Show.self, Accept.self, Reject.self, Cancel.self, Pickup.self, Deliver.self])

    static func line(_ r: TravelRequest) -> String {
        "\(r.id)\t\(r.status.rawValue)\t\(r.trip.from.name) → \(r.trip.to.name) \(r.trip.date)\t\(r.grams) g \(r.category)\t\(r.price.total.money)\(r.availableActions.isEmpty ? "" : "\t[" + r.availableActions.map(\.rawValue).joined(separator: ", ") + "]")"
    }

    static func show(_ r: TravelRequest, _ options: GlobalOptions) {
        if options.json { Output.json(r); return }
        Output.line(line(r))
        if let url = r.shipment?.paymentUrl { Output.line("Pay here\(r.shipment?.sandbox == true ? " (sandbox, no money moves)" : ""): \(url)") }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask the traveller of a trip (from `find-trips`) to carry your parcel.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The trip's id.") var trip: TripID
        @Option(help: "The parcel's category.") var category: String
        @Option(help: "Its weight in grams.") var grams: Int
        @Option(help: "What it is.") var description: String
        @Option(help: "What it is worth, in minor units (centimes).") var declaredValue: Int = 0
        @Option(help: "The receiver's name.") var receiverName: String
        @Option(help: "The receiver's email (their code goes there).") var receiverEmail: String
        @Option(help: "The receiver's phone.") var receiverPhone: String?
        @Option(help: "card or twint.") var payment: PaymentMethod = .card
        @Flag(help: "I attest the parcel holds nothing on the prohibited list (`trip categories` shows it).") var allowedContents = false

        func run() async throws {
            try await options.run { session in
                let r = try await session.sendRequest(TripRequestDraft(
                    trip: trip, category: category, grams: grams, declaredValue: declaredValue, description: description,
                    receiver: Recipient(name: receiverName, email: receiverEmail, phone: receiverPhone),
                    attestsAllowedContents: allowedContents, paymentMethod: payment))
                RequestCommand.show(r, options)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Requests you sent, or (--received) those on your trips.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Requests on your trips.") var received = false

        func run() async throws {
            try await options.run { session in
                let list = try await session.tripRequests(received: received)
                if options.json { Output.json(list); return }
                if list.isEmpty { Output.line("No requests.") }
                for r in list { Output.line(RequestCommand.line(r)) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one request.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        func run() async throws { try await options.run { RequestCommand.show(try await $0.tripRequest(request), options) } }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accept a request on your trip (the sender then pays).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        func run() async throws { try await options.run { RequestCommand.show(try await $0.acceptRequest(request), options) } }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decline a request on your trip.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        @Option(help: "Why (shown to the sender).") var reason: String?
        func run() async throws { try await options.run { RequestCommand.show(try await $0.rejectRequest(request, reason: reason), options) } }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Withdraw your request, or cancel it until pickup (refunded if paid).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        @Option(help: "Why.") var reason: String?
        func run() async throws { try await options.run { RequestCommand.show(try await $0.cancelRequest(request, reason: reason), options) } }
    }

    struct Pickup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "You have the parcel (checked against the sender's photo); the receiver gets their code.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        func run() async throws { try await options.run { RequestCommand.show(try await $0.pickUpRequest(request), options) } }
    }

    struct Deliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Hand the parcel over against the receiver's 6-digit code.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id.") var request: TripRequestID
        @Option(help: "The receiver's code.") var code: String
        func run() async throws { try await options.run { RequestCommand.show(try await $0.deliverRequest(request, code: code), options) } }
    }
}
