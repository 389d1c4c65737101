import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// Delivery imports and bulk actions: translation only (`OrderImports`, `Orders.bulk` and the
/// policies in WaybillCore decide).
extension APIHandler {
    func listOrderImports(_ input: Operations.ListOrderImports.Input) async throws -> Operations.ListOrderImports.Output {
        let me = try await principal()
        let records = try await OrderImports(request: try request).recent(by: me)
        return .ok(.init(body: .json(.init(items: try records.map { try Self.orderImport($0, problems: false) }))))
    }

    func uploadOrderImport(_ input: Operations.UploadOrderImport.Input) async throws -> Operations.UploadOrderImport.Output {
        let me = try await principal()
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var bytes: [UInt8]?, name: String?
        do {
            for try await part in form {
                if case .file(let file) = part {
                    guard bytes == nil else { throw WaybillError(.badRequest, .invalidMultipart, "Send one file.") }
                    name = file.filename
                    bytes = try await Self.collect(file.payload.body, field: "file", limit: OrderImportPolicy.maxBytes)
                }
            }
        } catch let error as WaybillError { throw error } catch {
            throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
        }
        guard let bytes else { throw WaybillError.validation("file", "required") }
        let record = try await OrderImports(request: try request).upload(bytes, fileName: name, by: me)
        return .created(.init(body: .json(try Self.orderImport(record, problems: true))))
    }

    func getOrderImport(_ input: Operations.GetOrderImport.Input) async throws -> Operations.GetOrderImport.Output {
        let me = try await principal()
        let record = try await OrderImports(request: try request).find(try Self.plainID(input.path.importId, "importId"), by: me)
        return .ok(.init(body: .json(try Self.orderImport(record, problems: true))))
    }

    func commitOrderImport(_ input: Operations.CommitOrderImport.Input) async throws -> Operations.CommitOrderImport.Output {
        let me = try await principal()
        let record = try await OrderImports(request: try request).commit(try Self.plainID(input.path.importId, "importId"), by: me)
        return .ok(.init(body: .json(try Self.orderImport(record, problems: true))))
    }

    func getOrderImportTemplate(_ input: Operations.GetOrderImportTemplate.Input) async throws -> Operations.GetOrderImportTemplate.Output {
        let french = input.query.lang == .fr
        let name = french ? "waybill-modele-livraisons" : "waybill-deliveries-template"
        if input.query.format == .xlsx {
            let data = try OrderImportTemplateFile.xlsx(french: french)
            try request.storage[DownloadNameKey.self] = name + ".xlsx"
            return .ok(.init(body: .applicationVnd_openxmlformatsOfficedocument_spreadsheetml_sheet(HTTPBody(data))))
        }
        try request.storage[DownloadNameKey.self] = name + ".csv"
        return .ok(.init(body: .csv(HTTPBody(ImportTemplate.csv(french: french)))))
    }

    static func orderImport(_ r: OrderImportRecord, problems: Bool) throws -> S.OrderImport {
        S.OrderImport(
            id: try r.storedID.uuidString, fileName: r.fileName, format: r.format == "xlsx" ? .xlsx : .csv,
            status: S.OrderImport.StatusPayload(rawValue: r.shownStatus) ?? .ready,
            createdAt: date(r.createdAt), expiresAt: date(r.expiresAt), committedAt: r.committedAt.map(date),
            rowCount: r.rowCount, validCount: r.validCount, invalidCount: r.invalidCount, alreadyImportedCount: r.alreadyCount,
            createdCount: r.createdCount, problemCount: r.problemCount,
            total: money(Money(Int(clamping: r.totalAmount), r.currency)),
            problems: problems ? r.problems.map { p in
                .init(row: p.row, column: p.column, code: p.code, message: ImportText.message(p.code).en)
            } : [])
    }

    func bulkOrderAction(_ input: Operations.BulkOrderAction.Input) async throws -> Operations.BulkOrderAction.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let ids: [OrderID] = try body.orderIds.map { try Self.uuidField($0, "orderIds") }
        let action: Orders.BulkAction = switch body.action {
        case .assign: .assign(driver: try Self.uuidField(body.driverId ?? "", "driverId"))
        case .cancel: .cancel(reason: body.reason ?? "")
        }
        let results = try await orders.bulk(action, ids, by: me)
        return .ok(.init(body: .json(.init(
            succeeded: results.filter(\.ok).count, failed: results.filter { !$0.ok }.count,
            results: results.map { r in
                .init(orderId: r.id.uuidString, ok: r.ok, reference: r.order?.reference,
                      status: r.order.flatMap { S.OrderStatus(rawValue: $0.status.rawValue) },
                      error: r.error.map { .init(code: $0.code.rawValue, message: $0.message) })
            }))))
    }
}

/// The template as a workbook (the CSV one is `ImportTemplate.csv`, in WaybillCore).
enum OrderImportTemplateFile {
    static func xlsx(french: Bool) throws -> Data {
        let rows = CSVText.rows(Array(ImportTemplate.csv(french: french).utf8))
        guard case .success(let table) = rows else { throw Abort(.internalServerError) }
        return try XLSX.workbook(rows: table.map(\.fields), sheetName: french ? "Livraisons" : "Deliveries")
    }
}

/// CSV exports: translation only (`Exports` and `ExportPolicy` decide); the body streams.
extension APIHandler {
    func exportCSV(_ input: Operations.ExportCSV.Input) async throws -> Operations.ExportCSV.Output {
        let me = try await principal()
        guard let kind = ExportKind(rawValue: input.path.kind.rawValue) else { throw WaybillError.notFound }
        let box = input.query.box.flatMap { ShipmentBox(rawValue: $0.rawValue) }
        let export = try await Exports(request: try request).export(kind, from: input.query.from, to: input.query.to, box: box, by: me)
        try request.storage[DownloadNameKey.self] = export.fileName
        return .ok(.init(body: .csv(HTTPBody(export.body, length: .unknown, iterationBehavior: .single))))
    }
}

/// The name of a file an operation answers with, for `Content-Disposition` (`SpecValidationMiddleware`).
struct DownloadNameKey: StorageKey {
    typealias Value = String
}
