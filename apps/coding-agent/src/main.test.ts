import { expect, it } from "vitest";
import { runCodingAgent } from "./coding-agent.js";

it("fixes a temporary copy of the sample project offline: reads run in parallel, edits one at a time", async () => {
  const lines: string[] = [];
  const { result, calls, files } = await runCodingAgent((line) => lines.push(line), {});
  expect(lines[0]).toMatch(
    /^Lattice coding agent: offline, against the scripted model server at http:\/\/127\.0\.0\.1:\d+/,
  );
  const text = lines.join("\n");
  expect(text).toContain("plan: [LS ‖ Glob]");
  expect(text).toContain("plan: [Read ‖ Read ‖ Read ‖ Grep]");
  expect(text).toContain("plan: [Edit] → [Edit] → [Write]");
  expect(result).toMatchObject({ subtype: "success", numTurns: 5 });

  // The second batch's reads and search all started before any of them finished.
  const batch = calls.filter((call) => ["Read", "Grep"].includes(call.name)).slice(0, 4);
  expect(batch.map((call) => call.name).sort()).toEqual(["Grep", "Read", "Read", "Read"]);
  expect(Math.max(...batch.map((call) => call.start))).toBeLessThan(
    Math.min(...batch.map((call) => call.end)),
  );
  expect(Math.max(...batch.map((call) => call.inFlight))).toBe(4);
  // Each edit or write ran alone: it overlaps no other call.
  const writes = calls.filter((call) => call.name === "Edit" || call.name === "Write");
  expect(writes.map((call) => call.name)).toEqual(["Edit", "Edit", "Write"]);
  for (const write of writes) {
    expect(write.inFlight).toBe(1);
    for (const other of calls) {
      if (other !== write) expect(other.end <= write.start || other.start >= write.end).toBe(true);
    }
  }
  expect(calls.every((call) => !call.isError)).toBe(true);

  // The copy was fixed (and the sample project itself left alone).
  expect(files["src/math.ts"]).toContain("return a + b;");
  expect(files["src/strings.ts"]).toContain("toLowerCase()");
  expect(files["CHANGELOG.md"]).toContain("Fix `add()`");
  expect(text).toContain("Writes and edits: 3 calls, up to 1 at once.");
});
