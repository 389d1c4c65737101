import Testing
@testable import WaybillCore

@Suite("Pricing")
struct PricingTests {
    let zurichHB = Coordinate(latitude: 47.3779, longitude: 8.5403)
    let bernHB = Coordinate(latitude: 46.9490, longitude: 7.4391)

    @Test("great-circle distance Zürich HB – Bern HB is about 95 km")
    func distance() {
        let km = zurichHB.distance(to: bernHB) / 1000
        #expect(km > 94 && km < 96)
        #expect(zurichHB.distance(to: zurichHB) == 0)
    }

    @Test("with both coordinates: base fee plus per-km rate, lines adding up to the price")
    func distancePrice() {
        let quote = Pricing.quote(tariff: .initial, weightClass: .small, service: .standard, pickup: zurichHB, dropoff: bernHB)
        let meters = quote.distanceMeters!
        let expected = (900 + (150 * meters + 500) / 1000 + 2) / 5 * 5
        #expect(quote.price == Money(expected, "CHF"))
        #expect(quote.breakdown.reduce(0) { $0 + $1.amount } == quote.price.amount)
        #expect(quote.breakdown.first?.kind == .baseFee)
        #expect(quote.breakdown.contains { $0.kind == .distance })
        #expect(quote.price.amount % 5 == 0)
    }

    @Test("without coordinates on both ends: the class's flat rate")
    func flatRate() {
        for (weight, fee) in [(WeightClass.small, 1500), (.medium, 2000), (.large, 3000)] {
            let quote = Pricing.quote(tariff: .initial, weightClass: weight, service: .standard, pickup: zurichHB, dropoff: nil)
            #expect(quote.price == Money(fee, "CHF"))
            #expect(quote.distanceMeters == nil)
            #expect(quote.breakdown.map(\.kind) == [.flatRate])
        }
    }

    @Test("express multiplies the subtotal by the tariff's percentage")
    func express() {
        let standard = Pricing.quote(tariff: .initial, weightClass: .medium, service: .standard, pickup: nil, dropoff: nil)
        let express = Pricing.quote(tariff: .initial, weightClass: .medium, service: .express, pickup: nil, dropoff: nil)
        #expect(standard.price.amount == 2000)
        #expect(express.price.amount == 3000)
        #expect(express.breakdown.last == PriceLine(kind: .express, label: "Express", amount: 1000))
    }

    @Test("a changed tariff changes new quotes")
    func tariffChange() {
        var tariff = Tariff.initial
        tariff.small.flatFee = 1234
        tariff.roundingIncrement = 1
        tariff.currency = "EUR"
        let quote = Pricing.quote(tariff: tariff, weightClass: .small, service: .standard, pickup: nil, dropoff: nil)
        #expect(quote.price == Money(1234, "EUR"))
    }

    @Test("rounding to 5 centimes adds a rounding line; integer arithmetic rounds halves up")
    func rounding() {
        var tariff = Tariff.initial
        tariff.small.flatFee = 1003
        let quote = Pricing.quote(tariff: tariff, weightClass: .small, service: .standard, pickup: nil, dropoff: nil)
        #expect(quote.price.amount == 1005)
        #expect(quote.breakdown.last == PriceLine(kind: .rounding, label: "Rounding", amount: 2))
        #expect(1002.rounded(toMultipleOf: 5) == 1000)
        #expect(1003.rounded(toMultipleOf: 5) == 1005)
        #expect(150.scaled(by: 1500, over: 1000) == 225)
        #expect(3.scaled(by: 1, over: 2) == 2)
    }

    @Test("tariff validation lists every bad field")
    func tariffValidation() throws {
        var tariff = Tariff.initial
        tariff.currency = "chf"
        #expect(try tariff.validated().get().currency == "CHF")
        tariff.currency = "FRANC"
        tariff.medium.perKm = -1
        tariff.expressMultiplierPercent = 99
        tariff.roundingIncrement = 0
        guard case .failure(let error) = tariff.validated() else { Issue.record("accepted"); return }
        #expect(error.errors.fields == ["currency": "invalid", "medium.perKm": "out_of_range",
                                        "expressMultiplierPercent": "out_of_range", "roundingIncrement": "out_of_range"])
    }

    @Test("money prints in major units")
    func moneyDescription() {
        #expect(Money(1250, "CHF").description == "CHF 12.50")
        #expect(Money(5, "EUR").description == "EUR 0.05")
    }
}

@Suite("Order requests")
struct OrderRequestTests {
    let home = Address(street: "Bahnhofstrasse 1", postalCode: "8001", city: "Zürich")
    let dropoff = AddressInput(street: "Bundesplatz 3", postalCode: "3005", city: "Bern", latitude: 46.9466, longitude: 7.4441)

    func request(_ payment: PaymentMethod = .cash, pickup: PickupInput = PickupInput(useAccountAddress: true),
                 email: String? = nil, code: Bool = false) -> OrderRequest {
        OrderRequest(quote: QuoteRequest(pickup: pickup, dropoff: dropoff, weightClass: .small, service: .standard),
                     paymentMethod: payment, recipientName: " Bea Beispiel ", recipientEmail: email, requireRecipientCode: code)
    }

    @Test("the account's address can be the pickup")
    func accountAddress() throws {
        let order = try request().validated(accountAddress: home, isCompany: false, vetted: false, currency: "CHF").get()
        #expect(order.pickup == home)
        #expect(order.recipient.name == "Bea Beispiel")
        guard case .failure(let error) = request().validated(accountAddress: nil, isCompany: false, vetted: false, currency: "CHF") else {
            Issue.record("accepted"); return
        }
        #expect(error.errors["pickup.useAccountAddress"] == "no_account_address")
    }

    @Test("every problem is reported at once, with dotted field names")
    func allProblems() {
        let bad = OrderRequest(
            quote: QuoteRequest(pickup: PickupInput(address: AddressInput(street: "", postalCode: "80/01", city: "Zürich", latitude: 91)),
                                dropoff: AddressInput(), weightClass: .large, service: .express),
            paymentMethod: .invoice, recipientName: nil, recipientEmail: "nope", recipientPhone: "call me",
            notes: String(repeating: "x", count: 1001))
        guard case .failure(let error) = bad.validated(accountAddress: nil, isCompany: false, vetted: false, currency: "CHF") else {
            Issue.record("accepted"); return
        }
        #expect(error.errors.fields == [
            "pickup.street": "required", "pickup.postalCode": "invalid", "pickup.longitude": "required",
            "dropoff.street": "required", "dropoff.postalCode": "required", "dropoff.city": "required",
            "recipient.name": "required", "recipient.email": "invalid_email", "recipient.phone": "invalid",
            "notes": "too_long", "paymentMethod": "invoice_requires_company",
        ])
    }

    @Test("invoice only for companies staff have vetted, TWINT only in CHF, a recipient code needs the recipient's email")
    func paymentRules() {
        #expect((try? request(.invoice).validated(accountAddress: home, isCompany: true, vetted: true, currency: "CHF").get()) != nil)
        if case .failure(let e) = request(.invoice).validated(accountAddress: home, isCompany: true, vetted: false, currency: "CHF") {
            #expect(e.errors["paymentMethod"] == "company_not_vetted")
        } else { Issue.record("invoice accepted from a company staff have not vetted") }
        if case .failure(let e) = request(.twint).validated(accountAddress: home, isCompany: false, vetted: false, currency: "EUR") {
            #expect(e.errors["paymentMethod"] == "twint_requires_chf")
        } else { Issue.record("TWINT accepted in EUR") }
        if case .failure(let e) = request(code: true).validated(accountAddress: home, isCompany: false, vetted: false, currency: "CHF") {
            #expect(e.errors["recipient.email"] == "required_for_recipient_code")
        } else { Issue.record("code without email accepted") }
        #expect((try? request(email: "bea@example.com", code: true).validated(accountAddress: home, isCompany: false, vetted: false, currency: "CHF").get()) != nil)
    }
}
