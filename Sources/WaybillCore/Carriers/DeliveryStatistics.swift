import Foundation

/// One delivered parcel, as the statistics see it (issue "Parcels of every carrier", item 9): its
/// carrier (`waybill` for Waybill's own fleet), where it went from and to (ISO country codes when
/// known), when the carrier first had it, when it was delivered, and whether the first attempt did it.
public struct DeliverySample: Sendable, Equatable, Codable {
    public var carrier: String
    public var origin: String?
    public var destination: String?
    public var firstScanAt: Int64
    public var deliveredAt: Int64
    public var firstAttempt: Bool

    public init(carrier: String, origin: String?, destination: String?, firstScanAt: Int64, deliveredAt: Int64, firstAttempt: Bool) {
        self.carrier = carrier
        self.origin = origin
        self.destination = destination
        self.firstScanAt = firstScanAt
        self.deliveredAt = deliveredAt
        self.firstAttempt = firstAttempt
    }

    /// From a carrier's events: the first scan is the first event after the label (any mapped status but
    /// `pending`), delivery the first `delivered` event; a failed attempt before it means not on the
    /// first attempt. Countries are read from the events' places ("Köln, DE"). nil until delivered.
    public static func from(carrier: String, events: [ParcelEvent]) -> DeliverySample? {
        let ordered = events.sorted { $0.at < $1.at }
        guard let first = ordered.first(where: { $0.status != nil && $0.status != .pending }),
              let delivered = ordered.first(where: { $0.status == .delivered }), delivered.at >= first.at else { return nil }
        let failed = ordered.contains { $0.at < delivered.at && $0.status == .deliveryFailed }
        return DeliverySample(carrier: carrier, origin: country(of: first.location), destination: country(of: delivered.location),
                              firstScanAt: first.at, deliveredAt: delivered.at, firstAttempt: !failed)
    }

    /// "Köln, DE" → DE: the last part, when it is two capital letters.
    public static func country(of location: String?) -> String? {
        guard let last = location?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), last.count == 2,
              last.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else { return nil }
        return last
    }

    public var hours: Double { Double(deliveredAt - firstScanAt) / 3_600_000 }
}

/// Delivery times per carrier (and per route), from first scan to delivery: median, 90th
/// percentile, and the share delivered on the first attempt.
public enum DeliveryStatistics {
    public struct Row: Sendable, Equatable, Codable {
        public var carrier: String
        /// nil in the rows per carrier; set in the rows per route.
        public var origin: String?
        public var destination: String?
        public var count: Int
        public var medianHours: Double
        public var p90Hours: Double
        /// 0…1.
        public var firstAttemptShare: Double
    }

    public enum Grouping: Sendable { case carrier, route }

    /// Rows with at least `minimumCount` samples (the public board hides smaller groups: a row of one
    /// is one person's parcel), the fastest median first.
    public static func rows(_ samples: [DeliverySample], by grouping: Grouping, minimumCount: Int) -> [Row] {
        let groups = Dictionary(grouping: samples) { s -> String in
            grouping == .carrier ? s.carrier : "\(s.carrier)|\(s.origin ?? "?")|\(s.destination ?? "?")"
        }
        return groups.values.compactMap { group -> Row? in
            guard group.count >= max(1, minimumCount), let first = group.first else { return nil }
            let hours = group.map(\.hours).sorted()
            return Row(carrier: first.carrier, origin: grouping == .route ? first.origin : nil,
                       destination: grouping == .route ? first.destination : nil, count: group.count,
                       medianHours: percentile(hours, 0.5), p90Hours: percentile(hours, 0.9),
                       firstAttemptShare: Double(group.filter(\.firstAttempt).count) / Double(group.count))
        }.sorted { ($0.medianHours, $0.carrier, $0.origin ?? "", $0.destination ?? "") < ($1.medianHours, $1.carrier, $1.origin ?? "", $1.destination ?? "") }
    }

    /// Nearest-rank percentile of sorted values (`p` in 0…1); 0 for none.
    public static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
