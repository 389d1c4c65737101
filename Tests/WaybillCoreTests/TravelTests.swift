import Foundation
import Testing
@testable import WaybillCore

@Suite("Areas: folding, searching, the CSV format")
struct AreaTests {
    static let csv = """
    id,parent_id,level,name,name_fr,name_de,name_en,latitude,longitude,keywords
    CH,,country,Schweiz,Suisse,Schweiz,Switzerland,46.8,8.2,CH
    CH-GE,CH,canton,Genève,Genève,Genf,Geneva,46.2,6.1,GE
    CH-M6621,CH-GE,municipality,Genève,,Genf,Geneva,46.2,6.14,1201|1202
    CH-VD,CH,canton,Vaud,Vaud,Waadt,Vaud,46.6,6.6,VD
    CH-D2225,CH-VD,district,Lausanne,District de Lausanne,Bezirk Lausanne,,,,
    CH-M5586,CH-D2225,municipality,Lausanne,,,,46.52,6.63,1000|1003
    CH-NE,CH,canton,Neuchâtel,,Neuenburg,,,,NE
    CH-M6421,CH-NE,municipality,"La Chaux-de-Fonds",,,,47.1,6.83,2300
    CH-SG,CH,canton,St. Gallen,Saint-Gall,St. Gallen,,,,SG
    CH-ZH,CH,canton,Zürich,Zurich,Zürich,Zurich,47.4,8.6,ZH
    CH-M261,CH-ZH,municipality,Zürich,Zurich,,,47.37,8.54,8001
    """

    static func index() throws -> AreaIndex {
        guard case .success(let areas) = AreaCSV.parse(csv) else { Issue.record("the sample does not parse"); return AreaIndex() }
        return AreaIndex(areas)
    }

    @Test("Case, accents and punctuation fold away; ß, œ and æ become two letters")
    func folding() {
        #expect(AreaText.fold("Genève") == "geneve")
        #expect(AreaText.fold("  Saint-Gall ") == "saint gall")
        #expect(AreaText.fold("St. Gallen") == "st gallen")
        #expect(AreaText.fold("ZÜRICH") == "zurich")
        #expect(AreaText.fold("Großhöchstetten") == "grosshochstetten")
        #expect(AreaText.fold("Œuf d’Æther") == "oeuf d aether")
        #expect(AreaText.fold("Biel/Bienne") == "biel bienne")
        #expect(AreaText.keys("La Chaux-de-Fonds") == ["la chaux de fonds", "chaux de fonds", "de fonds", "fonds"])
    }

    @Test("A prefix in any language finds the area, accents ignored; an exact name and larger areas come first")
    func searching() throws {
        let index = try Self.index()
        #expect(index.count == 11)
        // "genf" is German; "gene" finds the canton before the city of the same name.
        #expect(index.search("genf").map(\.area.id.rawValue) == ["CH-GE", "CH-M6621"])
        #expect(index.search("gene").map(\.area.id.rawValue) == ["CH-GE", "CH-M6621"])
        #expect(index.search("GENÈVE").first?.matchedName == "Genève")
        // A word inside a name, and the French name of St. Gallen.
        #expect(index.search("fonds").map(\.area.id.rawValue) == ["CH-M6421"])
        #expect(index.search("saint g").map(\.area.id.rawValue) == ["CH-SG"])
        // Postal codes and abbreviations are keywords.
        #expect(index.search("1003").map(\.area.id.rawValue) == ["CH-M5586"])
        #expect(index.search("vd").first?.area.id.rawValue == "CH-VD")
        // Exact first: "lausanne" is the district and the city, the district is larger.
        #expect(index.search("lausanne").map(\.area.id.rawValue) == ["CH-D2225", "CH-M5586"])
        // Ancestors come with each answer, nearest first.
        #expect(index.search("lausanne")[1].ancestors.map(\.id.rawValue) == ["CH-D2225", "CH-VD", "CH"])
        #expect(index.search("zur", within: AreaID("CH-ZH")).map(\.area.id.rawValue) == ["CH-ZH", "CH-M261"])
        #expect(index.search("lausanne", within: AreaID("CH-GE")).isEmpty)
        #expect(index.search("zzz").isEmpty && index.search("  ").isEmpty && index.search("-").isEmpty)
        #expect(index.search("z", limit: 1).count == 1)
    }

    @Test("An area lies within itself and its ancestors; descendants include the area")
    func hierarchy() throws {
        let index = try Self.index()
        #expect(index.isWithin(AreaID("CH-M5586"), AreaID("CH-VD")))
        #expect(index.isWithin(AreaID("CH-M5586"), AreaID("CH")))
        #expect(!index.isWithin(AreaID("CH-VD"), AreaID("CH-M5586")))
        #expect(index.descendants(of: AreaID("CH-VD")) == Set(["CH-VD", "CH-D2225", "CH-M5586"].map { AreaID($0) }))
        #expect(index.roots.map(\.id.rawValue) == ["CH"])
        #expect(index.children(of: AreaID("CH")).map(\.name) == ["Genève", "Neuchâtel", "St. Gallen", "Vaud", "Zürich"])
    }

    @Test("A CSV with problems names each line; quoted fields, a BOM and CRLF are read")
    func csvProblems() {
        guard case .failure(let problems) = AreaCSV.parse("""
            id,level,name,latitude,longitude
            A,country,Alpha,,
            A,country,Again,,
            B,,Beta,,
            C,region,Gamma,91,0
            bad id,region,Delta,,
            """) else { Issue.record("accepted"); return }
        #expect(problems.lines.map(\.line) == [3, 4, 5, 6])
        guard case .failure(let header) = AreaCSV.parse("name,level\nx,y\n") else { Issue.record("accepted"); return }
        #expect(header.lines.first?.line == 1)
        guard case .success(let quoted) = AreaCSV.parse("\u{FEFF}id,level,name,name_fr\r\nA,city,\"Foo, \"\"the\"\" city\",Fou\r\n") else {
            Issue.record("refused"); return
        }
        #expect(quoted.first?.name == "Foo, \"the\" city" && quoted.first?.names == ["fr": "Fou"])
        // What `write` writes, `parse` reads back.
        guard case .success(let again) = AreaCSV.parse(AreaCSV.write(quoted)) else { Issue.record("round trip"); return }
        #expect(again == quoted)
    }

    @Test("A hierarchy with an unknown parent or a loop is refused; parents may already be stored")
    func hierarchyChecks() {
        let a = Area(id: AreaID("A"), parent: AreaID("B"), level: "x", name: "A")
        let b = Area(id: AreaID("B"), parent: AreaID("A"), level: "x", name: "B")
        #expect(AreaCSV.checkHierarchy([a, b]).contains { $0.contains("loop") })
        #expect(AreaCSV.checkHierarchy([a]).first?.contains("does not exist") == true)
        #expect(AreaCSV.checkHierarchy([a], existing: [Area(id: AreaID("B"), parent: nil, level: "x", name: "B")]).isEmpty)
    }
}

@Suite("Trips: validation, status, prices and matching")
struct TripTests {
    static let now: Int64 = 1_795_000_000_000 // 2026-11-18
    static func draft(date: String = "2026-12-04", earliest: String = "07:00", latest: String = "09:00",
                      zone: String = "Europe/Zurich") -> TripDraft {
        TripDraft(from: AreaID("CH-M5586"), to: AreaID("CH-M261"), date: date, earliest: earliest, latest: latest, timeZone: zone,
                  capacityGrams: 5000, capacityParcels: 2, categories: ["small_parcel", "documents", "documents"])
    }

    @Test("The departure window is read in the trip's own time zone, summer and winter")
    func timeZones() throws {
        let winter = try #require(TripDraft.window(date: "2026-12-04", earliest: "07:00", latest: "09:00", timeZone: "Europe/Zurich"))
        #expect(winter.from == 1_796_364_000_000) // 06:00 UTC
        let summer = try #require(TripDraft.window(date: "2026-07-01", earliest: "07:00", latest: "07:00", timeZone: "Europe/Zurich"))
        #expect(summer.from == 1_782_882_000_000) // 05:00 UTC
        #expect(TripDraft.window(date: "2026-02-30", earliest: "07:00", latest: "09:00", timeZone: "Europe/Zurich") == nil)
        #expect(TripDraft.window(date: "2026-12-04", earliest: "24:00", latest: "09:00", timeZone: "Europe/Zurich") == nil)
        #expect(TripDraft.window(date: "2026-12-04", earliest: "07:00", latest: "09:00", timeZone: "Mars/Olympus") == nil)
    }

    @Test("A trip is cleaned (categories sorted, once) or refused field by field")
    func validation() throws {
        let tariff = TravelTariff.standard
        let known: (AreaID) -> Bool = { $0.rawValue.hasPrefix("CH") }
        guard case .success(let plan) = Self.draft().validated(now: Self.now, tariff: tariff, areaExists: known) else { Issue.record("refused"); return }
        #expect(plan.draft.categories == ["documents", "small_parcel"])
        func errors(_ d: TripDraft) -> [String: String] {
            if case .failure(let e) = d.validated(now: Self.now, tariff: tariff, areaExists: known) { return e.errors.fields }
            return [:]
        }
        #expect(errors(Self.draft(date: "2026-11-01"))["date"] == "in_the_past")
        #expect(errors(Self.draft(date: "2028-01-01"))["date"] == "too_far")
        #expect(errors(Self.draft(date: "2026-13-01"))["date"] == "invalid")
        #expect(errors(Self.draft(earliest: "9:00"))["earliest"] == "invalid")
        #expect(errors(Self.draft(earliest: "10:00"))["latest"] == "before_earliest")
        #expect(errors(Self.draft(zone: "Nowhere/City"))["timeZone"] == "invalid")
        var d = Self.draft()
        d.to = d.from
        d.capacityGrams = 60_000
        d.capacityParcels = 0
        d.categories = ["pianos"]
        d.minimumReward = -1
        let e = errors(d)
        #expect(e["to"] == "same_as_from" && e["capacityGrams"] == "out_of_range" && e["capacityParcels"] == "out_of_range")
        #expect(e["categories"] == "unknown_category" && e["minimumReward"] == "out_of_range")
        d = Self.draft()
        d.from = AreaID("XX")
        #expect(errors(d)["from"] == "unknown_area")
    }

    @Test("A trip is open, full, departed by itself once its window has passed, or cancelled")
    func status() {
        #expect(Trip.status(cancelled: false, departsUntil: 10, gramsLeft: 1, parcelsLeft: 1, now: 5) == .open)
        #expect(Trip.status(cancelled: false, departsUntil: 10, gramsLeft: 0, parcelsLeft: 1, now: 5) == .full)
        #expect(Trip.status(cancelled: false, departsUntil: 10, gramsLeft: 1, parcelsLeft: 0, now: 5) == .full)
        #expect(Trip.status(cancelled: false, departsUntil: 10, gramsLeft: 1, parcelsLeft: 1, now: 10) == .departed)
        #expect(Trip.status(cancelled: true, departsUntil: 10, gramsLeft: 1, parcelsLeft: 1, now: 5) == .cancelled)
    }

    @Test("Only the traveller edits; route and date stay once parcels are booked, room never below what is booked")
    func editing() {
        let traveller = Caller(id: UserID.random(), capabilities: [.sender, .receiver, .traveller])
        let other = Caller(id: UserID.random(), capabilities: [.sender, .receiver, .traveller])
        #expect(TripPolicy.mayEdit(traveller: traveller.id, status: .open, bookedGrams: 0, bookedParcels: 0, changingRouteOrDate: true,
                                   newCapacity: (1, 1), by: traveller) == .allowed)
        #expect(TripPolicy.mayEdit(traveller: traveller.id, status: .open, bookedGrams: 0, bookedParcels: 0, changingRouteOrDate: false,
                                   newCapacity: (1, 1), by: other) == .forbidden)
        #expect(TripPolicy.mayEdit(traveller: traveller.id, status: .full, bookedGrams: 500, bookedParcels: 1, changingRouteOrDate: true,
                                   newCapacity: (1000, 1), by: traveller) == .booked)
        #expect(TripPolicy.mayEdit(traveller: traveller.id, status: .full, bookedGrams: 500, bookedParcels: 1, changingRouteOrDate: false,
                                   newCapacity: (400, 1), by: traveller) == .booked)
        #expect(TripPolicy.mayEdit(traveller: traveller.id, status: .departed, bookedGrams: 0, bookedParcels: 0, changingRouteOrDate: false,
                                   newCapacity: (1, 1), by: traveller) == .wrongStatus(.departed))
        #expect(TripPolicy.mayCancel(traveller: traveller.id, status: .cancelled, by: traveller) == .wrongStatus(.cancelled))
        #expect(!TripPolicy.mayPost(Caller(id: UserID.random(), capabilities: [.sender, .receiver])))
    }

    @Test("Prices come from the table: base price, each started kilogram beyond the first, the platform's share")
    func prices() throws {
        let t = TravelTariff.standard
        let small = try #require(t.price(category: "small_parcel", grams: 1000))
        #expect(small.total == Money(2000, "CHF") && small.platformFee == Money(300, "CHF") && small.travellerShare == Money(1700, "CHF"))
        #expect(t.price(category: "small_parcel", grams: 1001)?.total == Money(2300, "CHF"))
        #expect(t.price(category: "small_parcel", grams: 5000)?.total == Money(3200, "CHF"))
        #expect(t.price(category: "small_parcel", grams: 5001) == nil)
        #expect(t.price(category: "pianos", grams: 10) == nil)
        var huge = t
        huge.categories[0].pricePerKg = Int.max
        huge.categories[0].maxGrams = 50_000
        #expect(huge.price(category: "documents", grams: 50_000) == nil)
        if case .success = huge.validated() { Issue.record("an absurd price per kg passed") }
    }

    @Test("Matching: from and to inside the searched areas, in the sender's window, with room and the category; soonest and shortest detour first")
    func matching() throws {
        let index = try AreaTests.index()
        let sender = UserID.random()
        func trip(_ from: String, _ to: String, hoursAhead: Int64, grams: Int = 5000, categories: [String] = ["small_parcel"],
                  minimum: Int? = nil, points: (Coordinate, Coordinate)? = nil, traveller: UserID = .random()) -> TripCandidate {
            TripCandidate(id: .random(), traveller: traveller, from: AreaID(from), to: AreaID(to), fromPoint: points?.0, toPoint: points?.1,
                          departsFrom: Self.now + hoursAhead * 3_600_000, departsUntil: Self.now + (hoursAhead + 2) * 3_600_000,
                          gramsLeft: grams, parcelsLeft: 1, categories: categories, minimumReward: minimum)
        }
        let lausanne = Coordinate(latitude: 46.52, longitude: 6.63), zurich = Coordinate(latitude: 47.37, longitude: 8.54)
        let later = trip("CH-M5586", "CH-M261", hoursAhead: 48)
        let sooner = trip("CH-D2225", "CH-ZH", hoursAhead: 24)
        let straight = trip("CH-M5586", "CH-M261", hoursAhead: 30, points: (lausanne, zurich))
        let detour = trip("CH-M5586", "CH-M261", hoursAhead: 29, points: (lausanne, Coordinate(latitude: 46.2, longitude: 6.14)))
        let wrongWay = trip("CH-M261", "CH-M5586", hoursAhead: 10)
        let tooSmall = trip("CH-M5586", "CH-M261", hoursAhead: 10, grams: 500)
        let documentsOnly = trip("CH-M5586", "CH-M261", hoursAhead: 10, categories: ["documents"])
        let greedy = trip("CH-M5586", "CH-M261", hoursAhead: 10, minimum: 5000)
        let own = trip("CH-M5586", "CH-M261", hoursAhead: 10, traveller: sender)
        let gone = trip("CH-M5586", "CH-M261", hoursAhead: -5)
        let outOfWindow = trip("CH-M5586", "CH-M261", hoursAhead: 24 * 20)
        let search = TripSearch(from: AreaID("CH-VD"), to: AreaID("CH-ZH"), earliest: nil, latest: Self.now + 24 * 10 * 3_600_000,
                                grams: 2000, category: "small_parcel", pickup: lausanne, dropoff: zurich)
        let ranked = TripMatching.rank([later, sooner, straight, detour, wrongWay, tooSmall, documentsOnly, greedy, own, gone, outOfWindow],
                                       for: search, tariff: .standard, areas: index, by: sender, now: Self.now)
        // The detour (the traveller goes to Geneva, the parcel to Zürich: some 340 km more) costs more
        // than waiting a day for the later trip.
        #expect(ranked.map(\.trip.id) == [sooner.id, straight.id, later.id, detour.id])
        #expect(ranked[1].detourMeters == 0 && (ranked[3].detourMeters ?? 0) > 300_000)
        #expect(ranked.allSatisfy { $0.price.total == Money(2300, "CHF") })
        // An area that is not above the trip's does not match: a search from Geneva finds nothing.
        var geneva = search
        geneva.from = AreaID("CH-GE")
        #expect(TripMatching.rank([later], for: geneva, tariff: .standard, areas: index, by: sender, now: Self.now).isEmpty)
    }
}

@Suite("Requests: where one stands, what each side may do and see")
struct TripRequestRuleTests {
    @Test("Progress follows the shipment once accepted; each side gets only its own buttons")
    func progressAndActions() {
        #expect(TripRequestProgress.of(.accepted, shipment: .awaitingPayment) == .awaitingPayment)
        #expect(TripRequestProgress.of(.accepted, shipment: .accepted) == .paid)
        #expect(TripRequestProgress.of(.accepted, shipment: .inTransit) == .pickedUp)
        #expect(TripRequestProgress.of(.lapsed, shipment: .cancelled) == .lapsed)
        #expect(TripRequestProgress.requested.actions(for: [.traveller]) == [.accept, .reject])
        #expect(TripRequestProgress.requested.actions(for: [.sender]) == [.cancel])
        #expect(TripRequestProgress.awaitingPayment.actions(for: [.traveller]).isEmpty)
        #expect(TripRequestProgress.pickedUp.actions(for: [.sender]).isEmpty)
        #expect(TripRequestProgress.pickedUp.actions(for: [.traveller]) == [.deliver])
    }

    @Test("The receiver's email is the sender's; the phone reaches the traveller once paid; only the sender gets the payment link")
    func visibility() {
        #expect(TripRequestVisibility.of(.requested, for: [.traveller]) == .init(receiverEmail: false, receiverPhone: false, paymentLink: false))
        #expect(TripRequestVisibility.of(.paid, for: [.traveller]) == .init(receiverEmail: false, receiverPhone: true, paymentLink: false))
        #expect(TripRequestVisibility.of(.awaitingPayment, for: [.sender]) == .init(receiverEmail: true, receiverPhone: true, paymentLink: true))
        #expect(TripRequestVisibility.of(.paid, for: []).receiverPhone == false, "staff see the request, not the receiver's phone")
    }

    @Test("Only the traveller, the traveller's trip, in the right status, may a request be answered; the system expires and lapses")
    func machine() {
        #expect(TripRequestMachine.decide(.accept, from: .requested, as: [.traveller]) == .allowed(.accepted))
        #expect(TripRequestMachine.decide(.accept, from: .requested, as: [.sender]) == .forbidden)
        #expect(TripRequestMachine.decide(.accept, from: .expired, as: [.traveller]) == .wrongStatus(.expired))
        #expect(TripRequestMachine.decide(.cancel, from: .accepted, as: [.sender]) == .wrongStatus(.accepted))
        #expect(TripRequestMachine.decide(.lapse, from: .accepted, as: [.system]) == .allowed(.lapsed))
        #expect(TripRequestDeadlines.answerBy(sentAt: 0, hours: 48, departsFrom: 3_600_000) == 3_600_000)
        #expect(TripRequestDeadlines.answerBy(sentAt: .max - 1, hours: 48, departsFrom: .max) < .max, "no trap on overflow")
        #expect(HandOverCodePolicy.normalized(" 123 456 ") == "123456" && HandOverCodePolicy.normalized("12345a") == nil)
    }
}
