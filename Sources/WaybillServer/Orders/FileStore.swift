import Foundation
import NIOPosix
import WaybillCore

/// Uploaded images on disk, under `STORAGE_PATH/files` (never a public folder). Names are chosen
/// here (128 random bits), never taken from the client; files are written to a temporary name
/// and renamed, so a crash leaves no half-written image under a real name.
struct FileStore: Sendable {
    let root: String
    let threadPool: NIOThreadPool

    func save(_ bytes: [UInt8], extension ext: String) async throws -> String {
        let name = randomHex(bytes: 16) + "." + ext
        let directory = root + "/" + name.prefix(2)
        let path = directory + "/" + name
        try await threadPool.runIfActive {
            let fm = FileManager.default
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let temporary = path + ".tmp"
            try Data(bytes).write(to: URL(fileURLWithPath: temporary))
            try fm.moveItem(atPath: temporary, toPath: path)
        }
        return name
    }

    func read(_ name: String) async throws -> Data {
        guard Self.isValidName(name) else { throw WaybillError.notFound }
        let path = root + "/" + name.prefix(2) + "/" + name
        return try await threadPool.runIfActive {
            guard let data = FileManager.default.contents(atPath: path) else { throw WaybillError.notFound }
            return data
        }
    }

    func delete(_ name: String) async {
        guard Self.isValidName(name) else { return }
        let path = root + "/" + name.prefix(2) + "/" + name
        _ = try? await threadPool.runIfActive { try? FileManager.default.removeItem(atPath: path) }
    }

    static func isValidName(_ name: String) -> Bool {
        let parts = name.split(separator: ".")
        return parts.count == 2 && parts[0].count == 32 && parts[0].allSatisfy(\.isHexDigit) && ["png", "jpg"].contains(parts[1])
    }
}

/// Upload limits of the issue: the signature small, photos up to a phone camera's size.
enum UploadLimits {
    static let signatureBytes = 512 * 1024
    static let photoBytes = 8 * 1024 * 1024
    static let signaturePixels = 4000
    static let photoPixels = 8000
    static let photosPerOrder = 5
}

extension ImageProblem {
    func apiError(field: String) -> WaybillError {
        switch self {
        case .notAnImage:
            return WaybillError(.unsupportedMediaType, .unsupportedImage, "\(field) is not a PNG or JPEG image.", fields: [field: "not_an_image"])
        case .formatNotAllowed(let format):
            return WaybillError(.unsupportedMediaType, .unsupportedImage, "\(field) may not be \(format.rawValue.uppercased()).", fields: [field: "format_not_allowed"])
        case .corrupt:
            return WaybillError(.unprocessableEntity, .validationFailed, "\(field) is a damaged image.", fields: [field: "corrupt_image"])
        case .dimensionsTooLarge(let width, let height):
            return WaybillError(.unprocessableEntity, .validationFailed, "\(field) is \(width) × \(height) pixels, more than allowed.", fields: [field: "dimensions_too_large"])
        }
    }
}
