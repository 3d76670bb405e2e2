// Prints the totals of the last test run as one plain line, "N passed, N failed", read from
// vitest's JSON report (.vitest-report.json). Exits 1 when anything failed or nothing ran.
import { existsSync, readFileSync } from "node:fs";

const path = ".vitest-report.json";
if (!existsSync(path)) {
  console.log("0 passed, 0 failed");
  process.exit(1);
}
const report = JSON.parse(readFileSync(path, "utf8"));
// A test file that failed to load has no test results: count it as one failure.
const brokenFiles = (report.testResults ?? []).filter(
  (file) => file.status === "failed" && (file.assertionResults ?? []).length === 0,
).length;
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + brokenFiles;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
if (failed > 0 || report.success === false || report.numTotalTests === 0) process.exit(1);
