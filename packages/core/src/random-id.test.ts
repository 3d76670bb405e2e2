import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { prefixedRandomId, randomId, randomToken } from "./random-id.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it("makes distinct v4 UUIDs, prefixed ids and base64url tokens", () => {
  const ids = new Set(Array.from({ length: 1000 }, () => randomId()));
  expect(ids.size).toBe(1000);
  for (const id of ids) expect(id).toMatch(UUID);
  const mail = prefixedRandomId("mail_");
  expect(mail.slice(0, 5)).toBe("mail_");
  expect(mail.slice(5)).toMatch(UUID);
  expect(randomToken(18)).toMatch(/^[A-Za-z0-9_-]{24}$/);
});

it("an id is one flat string: 10,000 ids hold under 120 bytes each (crypto.randomUUID's own ~480)", async () => {
  const source = new URL("./random-id.ts", import.meta.url).href;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `const { randomId } = await import(${JSON.stringify(source)});
       const { randomUUID } = await import("node:crypto");
       const perId = (make) => {
         for (let index = 0; index < 1000; index++) make();
         globalThis.gc();
         const before = process.memoryUsage().heapUsed;
         const kept = Array.from({ length: 10000 }, make);
         globalThis.gc();
         const bytes = (process.memoryUsage().heapUsed - before) / kept.length;
         return kept.length > 0 ? bytes : 0;
       };
       console.log(JSON.stringify({ flat: perId(randomId), uuid: perId(() => randomUUID()) }));`,
    ],
    { timeout: 30_000 },
  );
  const { flat, uuid } = JSON.parse(stdout) as { flat: number; uuid: number };
  expect(flat).toBeLessThan(120);
  // Not more than a UUID from node:crypto (on Node 20, a ~480-byte rope).
  expect(flat).toBeLessThanOrEqual(uuid + 8);
}, 40_000);
