// The generated registration (`APIProtocol.registerHandlers(on:serverURL:)`) is the whole of this
// target; its code comes from swift-openapi-generator at build time (openapi-generator-config.yaml).
@_exported import WaybillAPI
