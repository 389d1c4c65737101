import Foundation
import Testing
import WaybillCore

@Suite("Driver positions and arrival estimates")
struct PositionTests {
    let policy = PositionPolicy()
    let now: Int64 = 1_800_000_000_000

    func point(_ lat: Double, _ lon: Double, _ offsetMillis: Int64, accuracy: Double? = 5, heading: Double? = nil,
               speed: Double? = nil) -> PositionReport {
        PositionReport(latitude: lat, longitude: lon, accuracy: accuracy, heading: heading, speed: speed, recordedAt: now + offsetMillis)
    }

    @Test("A batch sent out of order is stored in time order")
    func sortsByTime() throws {
        let cleaned = try policy.clean([point(47.001, 8, -1000), point(47, 8, -3000), point(47.0005, 8, -2000)],
                                       previous: nil, now: now).get()
        #expect(cleaned.accepted.map(\.recordedAt) == [now - 3000, now - 2000, now - 1000])
        #expect(cleaned.ignored == 0)
    }

    @Test("Impossible values refuse the whole batch, each named by its index")
    func impossibleValues() {
        let batch = [point(91, 8, 0), point(47, -181, 0), point(47, 8, 0, accuracy: -1), point(47, 8, 0, heading: 360),
                     point(47, 8, 0, speed: 1000), point(47, 8, 120_000), point(47, 8, -25 * 3_600_000), point(.nan, 8, 0)]
        guard case .failure(let error) = policy.clean(batch, previous: nil, now: now) else {
            Issue.record("accepted impossible values")
            return
        }
        #expect(error.errors.fields == [
            "positions[0].latitude": "out_of_range", "positions[1].longitude": "out_of_range",
            "positions[2].accuracy": "out_of_range", "positions[3].heading": "out_of_range",
            "positions[4].speed": "out_of_range", "positions[5].recordedAt": "in_future",
            "positions[6].recordedAt": "too_old", "positions[7].latitude": "out_of_range",
        ])
    }

    @Test("An empty batch and an oversized one are refused")
    func batchSize() {
        #expect(throws: FieldErrorsError.self) { try policy.clean([], previous: nil, now: now).get() }
        let many = (0..<501).map { point(47, 8, Int64($0) * 1000 - 600_000) }
        #expect(throws: FieldErrorsError.self) { try policy.clean(many, previous: nil, now: now).get() }
    }

    @Test("A jump no vehicle could make is refused; GPS noise between close readings is not")
    func jumps() {
        // Zürich to Bern (95 km) in 10 seconds.
        let jump = policy.clean([point(47.3779, 8.5403, -10_000), point(46.9466, 7.4441, 0)], previous: nil, now: now)
        guard case .failure(let error) = jump else { Issue.record("accepted a teleport"); return }
        #expect(error.errors.fields == ["positions[1]": "impossible_jump"])
        // Against the previous known position too.
        let previous = point(47.3779, 8.5403, -5_000)
        #expect(throws: FieldErrorsError.self) { try policy.clean([point(46.9466, 7.4441, 0)], previous: previous, now: now).get() }
        // 300 m in one second is noise, not a jump (under the 1 km tolerance).
        #expect((try? policy.clean([point(47.0027, 8, 0)], previous: point(47, 8, -1000), now: now).get())?.accepted.count == 1)
        // 95 km in two hours is a drive.
        #expect((try? policy.clean([point(46.9466, 7.4441, 0)], previous: point(47.3779, 8.5403, -7_200_000), now: now).get())?.accepted.count == 1)
    }

    @Test("A retried batch and points too close together are ignored, not refused")
    func duplicatesIgnored() throws {
        let batch = [point(47, 8, -2000), point(47.0001, 8, -1000)]
        let again = try policy.clean(batch, previous: batch.last, now: now).get()
        #expect(again.accepted.isEmpty)
        #expect(again.ignored == 2)
        let dense = try policy.clean([point(47, 8, -1000), point(47, 8, -900), point(47, 8, -700)], previous: nil, now: now).get()
        #expect(dense.accepted.map(\.recordedAt) == [now - 1000, now - 700])
        #expect(dense.ignored == 1)
    }

    @Test("The arrival estimate is the straight-line distance at the average speed")
    func arrivalEstimate() throws {
        let here = point(47, 8, 0)
        let target = Coordinate(latitude: 47.1, longitude: 8)  // 11.1 km north
        let eta = try #require(ArrivalEstimate.estimate(from: here, to: target, stop: .dropoff, averageSpeedKmh: 30))
        #expect((11_100...11_150).contains(eta.distanceMeters))
        // 11.12 km at 30 km/h ≈ 22 minutes after the reading.
        #expect(abs(eta.arrivesAt - (now + Int64(Double(eta.distanceMeters) / (30 / 3.6) * 1000))) <= 100)  // metres are rounded
        #expect(ArrivalEstimate.estimate(from: here, to: Coordinate(latitude: 99, longitude: 8), stop: .pickup, averageSpeedKmh: 30) == nil)
    }
}

@Suite("Live channel messages")
struct LiveMessageTests {
    @Test("Events encode as {type, id, topic, at, data} and decode back")
    func eventRoundTrip() throws {
        let location = LiveLocation(driverId: .random(), driverFirstName: "Luca", orderId: .random(), orderStatus: "in_transit",
                                    position: PositionReport(latitude: 47, longitude: 8, recordedAt: 1_800_000_000_000))
        let event = LiveEvent(id: 42, topic: "order:X", at: 1_800_000_000_001, payload: .location(location))
        let data = try JSONEncoder().encode(event)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["type", "id", "topic", "at", "data"])
        #expect(object["type"] as? String == "location")
        #expect(try JSONDecoder().decode(LiveServerMessage.self, from: data) == .event(event))
        let reply = LiveReply.subscribed(topic: "fleet", replayed: 3, complete: true)
        #expect(try JSONDecoder().decode(LiveServerMessage.self, from: JSONEncoder().encode(reply)) == .reply(reply))
    }

    @Test("Commands decode from what a browser sends; topics parse or are refused")
    func commands() throws {
        let text = #"{"type":"subscribe","topic":"tracking:abc","since":17}"#
        #expect(try JSONDecoder().decode(LiveCommand.self, from: Data(text.utf8)) == .subscribe(topic: "tracking:abc", since: 17))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LiveCommand.self, from: Data(#"{"type":"shout"}"#.utf8)) }
        let id = OrderID.random()
        #expect(LiveTopic("order:\(id.uuidString)") == .order(id))
        #expect(LiveTopic("order:\(id.uuidString.lowercased())") == .order(id))
        #expect(LiveTopic("fleet") == .fleet)
        #expect(LiveTopic("order:nope") == nil)
        #expect(LiveTopic("users") == nil)
        #expect(LiveTopic("tracking:") == nil)
    }
}
