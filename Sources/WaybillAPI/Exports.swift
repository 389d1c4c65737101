@_exported import OpenAPIRuntime
