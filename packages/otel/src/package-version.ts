/** This package's version, given to `trace.getTracer` as the instrumentation scope's version. */
export const OTEL_PACKAGE_VERSION = "0.1.0";
