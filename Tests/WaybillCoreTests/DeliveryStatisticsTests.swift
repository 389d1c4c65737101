import Foundation
import Testing
import WaybillCore

@Suite("Delivery-speed statistics: first scan to delivery, median and p90, first attempts, small groups hidden")
struct DeliveryStatisticsTests {
    static let hour: Int64 = 3_600_000

    static func event(_ hours: Int64, _ status: ParcelStatus?, _ place: String? = nil) -> ParcelEvent {
        ParcelEvent(at: hours * hour, timeZoneKnown: true, localTime: "", rawCode: status?.rawValue ?? "x", status: status, description: "", location: place)
    }

    @Test("A sample from a carrier's events: the label is not the first scan; a failed attempt counts; countries from the places")
    func sample() {
        let events = [Self.event(0, .pending, "Bonn, DE"), Self.event(5, .inTransit, "Köln, DE"), Self.event(20, .deliveryFailed, "Paris, FR"),
                      Self.event(44, .delivered, "Paris, FR")]
        let s = DeliverySample.from(carrier: "dhl", events: events.shuffled())
        #expect(s == DeliverySample(carrier: "dhl", origin: "DE", destination: "FR", firstScanAt: 5 * Self.hour, deliveredAt: 44 * Self.hour, firstAttempt: false))
        #expect(s?.hours == 39)
        #expect(DeliverySample.from(carrier: "dhl", events: [Self.event(1, .inTransit)]) == nil, "not delivered")
        #expect(DeliverySample.from(carrier: "dhl", events: [Self.event(2, .delivered)])?.hours == 0, "delivered at the first scan")
        #expect(DeliverySample.from(carrier: "dhl", events: [Self.event(1, .pending), Self.event(2, nil)]) == nil, "unmapped codes are no scan")
        #expect(DeliverySample.country(of: "Zürich, CH") == "CH" && DeliverySample.country(of: "CHICAGO, IL, US") == "US")
        #expect(DeliverySample.country(of: "Berlin") == nil && DeliverySample.country(of: nil) == nil)
    }

    @Test("An event's place: the carrier's coordinates as given; else the gazetteer's, approximate; else none")
    func places() {
        var exact = Self.event(1, .inTransit, "Somewhere, CH")
        exact.latitude = 46.5
        exact.longitude = 6.6
        #expect(exact.place() == EventPlace(latitude: 46.5, longitude: 6.6, precision: .carrier))
        let town = Self.event(1, .inTransit, "Zürich, CH").place()
        #expect(town?.precision == .locality && town?.approximate == true && abs((town?.latitude ?? 0) - 47.37) < 0.1)
        #expect(Self.event(1, .inTransit, "Nowhere-at-all, FR").place()?.precision == .country)
        #expect(Self.event(1, .inTransit, nil).place() == nil)
        var broken = Self.event(1, .inTransit, "Bern, CH")
        broken.latitude = .nan
        broken.longitude = 7
        #expect(broken.place()?.precision == .locality, "coordinates that are not a place fall back to the name")
    }

    @Test("Median and 90th percentile by nearest rank; first-attempt share; groups below the minimum hidden; fastest first")
    func rows() {
        let dhl = (1...10).map { n in
            DeliverySample(carrier: "dhl", origin: "DE", destination: "CH", firstScanAt: 0, deliveredAt: Int64(n) * 10 * Self.hour, firstAttempt: n != 10)
        }
        let ups = (1...4).map { _ in DeliverySample(carrier: "ups", origin: "US", destination: "CH", firstScanAt: 0, deliveredAt: Self.hour, firstAttempt: true) }
        let board = DeliveryStatistics.rows(dhl + ups, by: .carrier, minimumCount: 5)
        #expect(board.map(\.carrier) == ["dhl"], "four UPS deliveries are not enough for the public board")
        #expect(board[0].medianHours == 50 && board[0].p90Hours == 90 && board[0].count == 10 && board[0].firstAttemptShare == 0.9)
        let own = DeliveryStatistics.rows(dhl + ups, by: .carrier, minimumCount: 1)
        #expect(own.map(\.carrier) == ["ups", "dhl"], "fastest first")
        let routes = DeliveryStatistics.rows(dhl + ups, by: .route, minimumCount: 1)
        #expect(routes.contains { $0.carrier == "dhl" && $0.origin == "DE" && $0.destination == "CH" })
        #expect(DeliveryStatistics.percentile([], 0.5) == 0 && DeliveryStatistics.percentile([3], 0.9) == 3)
    }
}
