import Foundation
import OpenAPIRuntime
import WaybillCore

/// A delivery import: the uploaded file, checked (its problems per row and column), and once
/// confirmed how many deliveries it placed.
public typealias OrderImport = Components.Schemas.OrderImport

/// What a bulk action did to each order.
public typealias BulkOrderResult = Operations.BulkOrderAction.Output.Ok.Body.JsonPayload

/// Bulk import of deliveries (dispatchers, and company accounts for themselves), bulk actions on
/// the board, and CSV exports.
extension WaybillSession {
    /// Uploads a CSV or XLSX file and checks every row; nothing is created until `commitOrderImport`.
    public func uploadOrderImport(_ file: Data, fileName: String) async throws(WaybillError) -> OrderImport {
        try await call {
            try await $0.uploadOrderImport(body: .multipartForm(MultipartBody([.file(.init(payload: .init(body: HTTPBody(file)), filename: fileName))])))
                .created.body.json
        }
    }

    public func orderImport(_ id: UUID) async throws(WaybillError) -> OrderImport {
        try await call { try await $0.getOrderImport(path: .init(importId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The last twenty imports, without their problems.
    public func orderImports() async throws(WaybillError) -> [OrderImport] {
        try await call { try await $0.listOrderImports().ok.body.json.items }
    }

    /// Places every valid row of a checked import at once (again: the same import, nothing more).
    public func commitOrderImport(_ id: UUID) async throws(WaybillError) -> OrderImport {
        try await call { try await $0.commitOrderImport(path: .init(importId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The template: English or French columns, CSV or Excel.
    public func orderImportTemplate(french: Bool = false, excel: Bool = false) async throws(WaybillError) -> Data {
        try await call {
            let body = try await $0.getOrderImportTemplate(query: .init(lang: french ? .fr : .en, format: excel ? .xlsx : .csv)).ok.body
            switch body {
            case .csv(let data): return try await Data(collecting: data, upTo: 1 << 20)
            case .applicationVnd_openxmlformatsOfficedocument_spreadsheetml_sheet(let data): return try await Data(collecting: data, upTo: 1 << 20)
            }
        }
    }

    /// Assigns orders to a driver, each by the rules of a single assignment (dispatchers).
    public func bulkAssign(_ orders: [UUID], to driver: UUID) async throws(WaybillError) -> BulkOrderResult {
        try await call {
            try await $0.bulkOrderAction(body: .json(.init(action: .assign, orderIds: orders.map { $0.uuidString.lowercased() },
                                                           driverId: driver.uuidString.lowercased()))).ok.body.json
        }
    }

    /// Cancels orders, each by the rules of a single cancellation (dispatchers).
    public func bulkCancel(_ orders: [UUID], reason: String) async throws(WaybillError) -> BulkOrderResult {
        try await call {
            try await $0.bulkOrderAction(body: .json(.init(action: .cancel, orderIds: orders.map { $0.uuidString.lowercased() }, reason: reason))).ok.body.json
        }
    }

    /// Streams a CSV export (`from` and `to` as `YYYY-MM-DD`, `to` included) to `write`, a chunk
    /// at a time, so a file of any size passes in constant memory. Returns the bytes written.
    @discardableResult
    public func exportCSV(_ kind: ExportKind, from: String? = nil, to: String? = nil, box: ShipmentBox? = nil,
                          into write: @Sendable (ArraySlice<UInt8>) throws -> Void) async throws(WaybillError) -> Int {
        try await call {
            let reply = try await $0.exportCSV(path: .init(kind: .init(rawValue: kind.rawValue)!),
                                               query: .init(from: from, to: to, box: box.flatMap { .init(rawValue: $0.rawValue) })).ok.body
            guard case .csv(let body) = reply else { return 0 }
            var total = 0
            for try await chunk in body {
                try write(chunk)
                total += chunk.count
            }
            return total
        }
    }
}
