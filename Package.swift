// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Waybill",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "WaybillCore", targets: ["WaybillCore"]),
        .library(name: "WaybillClient", targets: ["WaybillClient"]),
        .library(name: "WaybillRouting", targets: ["WaybillRouting"]),
        .executable(name: "waybill", targets: ["waybill"]),
        .executable(name: "waybill-bench", targets: ["waybill-bench"]),
        .executable(name: "waybill-client", targets: ["waybill-client"]),
        .executable(name: "waybill-routing", targets: ["waybill-routing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor.git", from: "4.115.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.12.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.8.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.10.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/swift-openapi-vapor.git", from: "1.0.1"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", "5.0.0"..<"7.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        // Push notifications: HTTP/2 to APNs, and a self-signed certificate for the local test server.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.25.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        // The live channel's load generator (waybill-bench).
        .package(url: "https://github.com/vapor/websocket-kit.git", from: "2.15.0"),
        // The SDK on Apple platforms (URLSession transport) and the command-line client.
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.4.0"),
        // Typed ids (an order's id cannot be passed where a user's is meant).
        .package(url: "https://github.com/pointfreeco/swift-tagged.git", from: "0.10.0"),
        // XLSX files of the delivery import are ZIP archives of XML.
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.19"),
        // /metrics in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        // OpenTelemetry traces by OTLP over HTTP (not gRPC: that trait would build grpc-swift for nothing).
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.0.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        // Pure domain: value types, validation, rules. No Vapor, no Fluent.
        .target(
            name: "WaybillCore",
            // Crypto: webhook signatures are made and checked by one piece of code (server and SDK).
            dependencies: [.product(name: "Tagged", package: "swift-tagged"), .product(name: "Crypto", package: "swift-crypto")],
            // The carriers' tracking-number formats, as data (scripts/make-carrier-formats).
            // The offline gazetteer of carriers' event locations (scripts/make-gazetteer, GeoNames CC BY 4.0).
            resources: [.copy("Resources/carrier-formats.json"), .copy("Resources/gazetteer.tsv"),
                        .copy("Resources/gazetteer-LICENSE.txt")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Route planning (pickup and delivery with time windows): pure Swift, no dependencies, so the
        // server and the SDK can both use it.
        .target(
            name: "WaybillRouting",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Shipping labels: a QR code encoder, Code 128, and a small PDF writer. Pure Swift, no
        // dependencies (tests read the results back with zbarimg and poppler).
        .target(
            name: "WaybillLabels",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Solves benchmark instances for scripts/bench-routing.
        .executableTarget(
            name: "waybill-routing",
            dependencies: ["WaybillRouting"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Generated from openapi.yaml, in three targets so that no build compiles what it does not use
        // and the three compile side by side: the types (and APIProtocol), the server's registration of
        // handlers (WaybillServer only) and the client (the SDK only).
        .target(
            name: "WaybillAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), noMetadataPrespecialization],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "WaybillAPIServer",
            dependencies: [
                "WaybillAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), noMetadataPrespecialization],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "WaybillAPIClient",
            dependencies: [
                "WaybillAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "WaybillServer",
            dependencies: [
                "WaybillCore",
                "WaybillRouting",
                "WaybillLabels",
                "WaybillAPI",
                "WaybillAPIServer",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIVapor", package: "swift-openapi-vapor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 for the Firebase service-account assertion.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.yaml"), .copy("Resources/web"), .copy("Resources/areas")],
            swiftSettings: [.swiftLanguageMode(.v6), noMetadataPrespecialization]
        ),
        .executableTarget(
            name: "waybill",
            dependencies: ["WaybillServer", .product(name: "Vapor", package: "vapor"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The load generator of scripts/bench-live: WebSocket subscribers and drivers reporting positions.
        .executableTarget(
            name: "waybill-bench",
            dependencies: [
                "WaybillCore",
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The Swift SDK for apps: the generated client behind a hand-written facade. No Vapor, no Fluent:
        // URLSession on Apple platforms; async-http-client and websocket-kit (NIO only) on Linux.
        .target(
            name: "WaybillClient",
            dependencies: [
                "WaybillCore",
                "WaybillAPI",
                "WaybillAPIClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                         condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                         condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client",
                         condition: .when(platforms: [.linux])),
                .product(name: "WebSocketKit", package: "websocket-kit",
                         condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The command-line client: uses only the SDK.
        .executableTarget(
            name: "waybill-client",
            dependencies: [
                "WaybillClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "WaybillCoreTests",
            dependencies: ["WaybillCore"],
            resources: [.copy("Fixtures")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "WaybillRoutingTests",
            dependencies: ["WaybillRouting"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "WaybillLabelsTests",
            dependencies: ["WaybillLabels"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "WaybillServerTests",
            dependencies: [
                "WaybillServer",
                "WaybillClient",
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

/// Release builds of the server's modules ask for generic metadata the plain way: with
/// prespecialization, every read of a model's field and every value `JSONEncoder` writes went
/// through the runtime's locked metadata map (a fifth of a list page's time, docs/performance.md).
var noMetadataPrespecialization: SwiftSetting {
    .unsafeFlags(["-Xfrontend", "-disable-generic-metadata-prespecialization"], .when(configuration: .release))
}
