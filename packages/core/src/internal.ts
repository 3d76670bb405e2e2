/**
 * `@lattice/core/internal`: what Lattice's own packages share with core (a worker of
 * `@lattice/bullmq` folds a stored run log with `RunLogState`, as core does). Not part of the
 * public API (the umbrella does not re-export it): unstable, with no semver promise; it may
 * change in any release.
 *
 * @packageDocumentation
 */

export { historyProblem } from "./check-history.js";
export type { LoggedRun } from "./logged-run.js";
export { RunLogState } from "./run-log-state.js";
