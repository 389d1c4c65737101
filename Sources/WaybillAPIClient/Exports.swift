// The generated `Client` is the whole of this target; its code comes from swift-openapi-generator at
// build time (openapi-generator-config.yaml). The SDK (WaybillClient) wraps it.
@_exported import WaybillAPI
