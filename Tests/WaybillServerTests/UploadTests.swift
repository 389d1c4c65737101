import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Uploads: signatures and photos")
struct UploadTests {
    @Test("Every operation that takes a file lets through a body as large as the file it accepts (the default ceiling is 64 KiB)")
    func bodyCeilings() throws {
        let yaml = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/WaybillServerTests/UploadTests.swift", with: "openapi.yaml"), encoding: .utf8)
        let spec = try SpecValidator(yaml: yaml)
        let files: [String: Int] = [
            "addOrderPhoto": UploadLimits.photoBytes, "confirmReceipt": UploadLimits.photoBytes, "deliverOrder": UploadLimits.photoBytes,
            "setTripRequestPhoto": UploadLimits.photoBytes, "sendImageMessage": UploadLimits.photoBytes, "checkInAtCounter": UploadLimits.photoBytes,
            "setProfilePicture": ProfilePicturePolicy.maxBytes, "uploadOrderImport": OrderImportPolicy.maxBytes, "fileClaim": 5 * UploadLimits.photoBytes,
        ]
        // A shop's webhook also takes bodies other than JSON (form-encoded text), within the default.
        let uploads = spec.operations.filter { $0.acceptsOtherBodies && $0.operationID != "shopWebhook" }
        #expect(Set(uploads.compactMap(\.operationID)) == Set(files.keys), "each upload's file limit is listed here")
        for operation in uploads {
            let id = operation.operationID ?? "?"
            let ceiling = try #require(operation.maxBodySize, "\(id) declares no x-waybill-max-body-bytes")
            #expect(ceiling > files[id] ?? 0, "\(id): \(ceiling) bytes")
        }
    }

    @Test("Wrong type, wrong format, too big, damaged or missing: refused with a clear error and nothing stored", arguments: TestDatabase.available)
    func badUploads(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .inTransit, cast: cast)

            // A GIF named signature.png is still a GIF.
            let gif = try await server.deliver(id, token: cast.driver.access, signature: SampleImages.gif)
            #expect(gif.status == .unsupportedMediaType)
            #expect(gif.json["error"]["fields"]["signature"].string == "not_an_image")
            // A JPEG is not accepted as a signature.
            let jpeg = try await server.deliver(id, token: cast.driver.access, signature: SampleImages.photoJPEG)
            #expect(jpeg.status == .unsupportedMediaType)
            #expect(jpeg.json["error"]["fields"]["signature"].string == "format_not_allowed")
            // Over 512 KB.
            let big = try await server.deliver(id, token: cast.driver.access, signature: SampleImages.signaturePNG + [UInt8](repeating: 0, count: 600 * 1024))
            #expect(big.status == .payloadTooLarge)
            // Truncated.
            let broken = try await server.deliver(id, token: cast.driver.access, signature: Array(SampleImages.signaturePNG.prefix(60)))
            #expect(broken.status == .unprocessableEntity)
            #expect(broken.json["error"]["fields"]["signature"].string == "corrupt_image")
            // No signature part at all.
            let missing = try await server.upload("/orders/\(id)/deliver", parts: [.text("recipientName", "Bea")], token: cast.driver.access)
            #expect(missing.status == .unprocessableEntity)
            #expect(missing.json["error"]["fields"]["signature"].string == "required")
            // JSON where a multipart form is expected.
            let json = try await server.send(.POST, "/orders/\(id)/deliver", json: ["recipientName": "Bea"], token: cast.driver.access)
            #expect(json.status == .unsupportedMediaType && json.errorCode == "unsupported_media_type", "\(json)")
            // A photo over 8 MB.
            let huge = try await server.deliver(id, token: cast.driver.access, photo: [UInt8](repeating: 0xFF, count: 8 * 1024 * 1024 + 10))
            #expect(huge.status == .payloadTooLarge)

            #expect(try await server.status(of: id) == "in_transit")
            #expect(try await OrderFile.query(on: server.db).count() == 0)
        }
    }

    @Test("The customer attaches a parcel photo before pickup; others cannot; stored without metadata", arguments: TestDatabase.available)
    func parcelPhotos(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            let added = try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "../../etc/passwd")], token: cast.customer.access)
            #expect(added.status == .created, "\(added)")
            #expect(added.json["kind"].string == "parcel_photo")
            #expect(added.json["width"].int == 32 && added.json["height"].int == 24)
            let file = try #require(try await OrderFile.query(on: server.db).first())
            #expect(FileStore.isValidName(file.storageName), "the server chose the name: \(file.storageName)")
            let stored = try await server.app.waybill.files.read(file.storageName)
            #expect(!String(decoding: stored, as: UTF8.self).contains("SecretCam"))

            let detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(detail.json["photos"].array.count == 1)

            #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.photoJPEG)], token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.photoJPEG)], token: cast.manager.access).status == .forbidden)
            #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", Array("hello".utf8))], token: cast.customer.access).status == .unsupportedMediaType)
            for _ in 0..<4 {
                #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.signaturePNG)], token: cast.customer.access).status == .created)
            }
            let sixth = try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.signaturePNG)], token: cast.customer.access)
            #expect(sixth.errorCode == "too_many_photos")
            try await server.advance(id, to: .inTransit, cast: cast)
            let late = try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.signaturePNG)], token: cast.customer.access)
            #expect(late.status == .conflict)
        }
    }
}
