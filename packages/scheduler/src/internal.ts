// @lattice/scheduler/internal: helpers the Lattice packages share with each other. Not part of
// the public API (the umbrella does not re-export them): they may change in any release.
export { createAbortError } from "./abort-error.js";
export { catchRejection, isThenable, raceAbort } from "./race-abort.js";
