export {
  type DefineSessionStoreCheck,
  runSessionStoreConformance,
  type SessionStoreCheck,
  type SessionStoreConformanceOptions,
  sessionStoreConformance,
} from "./session-store-conformance.js";
