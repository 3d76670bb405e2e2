// Benchmark of the session stores (not a test): the cost of one append, and of loading a long
// session to resume it. Run from the repository root after building the packages:
//
//   pnpm --filter @lattice/store-sqlite... build
//   node bench/session-store.bench.mjs         # add --quick for a shorter run
//
// Goals (docs/performance.md): a SQLite append (WAL, survives a killed process once it
// returns) under 0.2 ms at p50 and 2 ms at p99; load + parse of a 1,000-entry session under
// 20 ms. Each Lattice figure stands beside a floor measured in the same run on the same disk:
// hand-written better-sqlite3 calls (JSON.stringify + INSERT in a BEGIN IMMEDIATE transaction;
// SELECT + JSON.parse), with no argument checks and no version compare.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { memorySessionStore } from "../packages/core/dist/index.js";
import { sqliteSessionStore } from "../packages/store-sqlite/dist/index.js";

const Database = createRequire(new URL("../packages/store-sqlite/package.json", import.meta.url))(
  "better-sqlite3",
);
const quick = process.argv.includes("--quick");
const APPENDS = quick ? 500 : 2000;
const SESSION_ENTRIES = 1000;
const LOADS = quick ? 10 : 30;
const folder = mkdtempSync(join(tmpdir(), "lattice-session-bench-"));

const percentile = (values, fraction) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
};

/** A realistic run-log entry of about 1.5 KB: an assistant reply with text and a tool call. */
function logEntry(n) {
  return {
    v: 1,
    type: "assistant",
    runId: "run_01JABCDEFGHJKMNPQRSTVWXYZ",
    at: 1767225600000 + n,
    message: {
      role: "assistant",
      content: [
        {
          type: "text",
          text: `Step ${n}: I looked at the order history and the refund policy. `.repeat(16),
        },
        {
          type: "tool_use",
          id: `toolu_${String(n).padStart(8, "0")}`,
          name: "lookup_order",
          input: { orderId: `ord_${n}`, fields: ["status", "total", "items", "shipping"] },
        },
      ],
    },
    usage: { inputTokens: 1843 + n, outputTokens: 212, cacheReadTokens: 1024 },
  };
}
const entrySize = JSON.stringify(logEntry(0)).length;

/** Times `append` APPENDS times, one entry each; returns the durations in microseconds. */
async function timeAppends(append) {
  for (let n = 0; n < 100; n++) await append(n, true); // warm-up, on another session
  const micros = new Array(APPENDS);
  for (let n = 0; n < APPENDS; n++) {
    const started = performance.now();
    await append(n, false);
    micros[n] = (performance.now() - started) * 1000;
  }
  return micros;
}

function floorAppender(path, synchronous) {
  const db = new Database(path, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(
    "CREATE TABLE entries (session_id TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
  );
  const insert = db.prepare("INSERT INTO entries (session_id, seq, entry) VALUES (?, ?, ?)");
  const append = db.transaction((sessionId, seq, text) => insert.run(sessionId, seq, text));
  return {
    db,
    append: async (n, warm) =>
      append.immediate(warm ? "warm" : "s", n + 1, JSON.stringify(logEntry(n))),
  };
}

function storeAppender(store) {
  const versions = { warm: 0, s: 0 };
  return async (n, warm) => {
    const sessionId = warm ? "warm" : "s";
    versions[sessionId] = await store.append(sessionId, versions[sessionId], [logEntry(n)]);
  };
}

const rows = [];
const row = (measure, floor, lattice, goal, met) =>
  rows.push({ measure, floor, lattice, goal, met });
const us = (value) => `${value.toFixed(1)} µs`;

try {
  for (const synchronous of ["normal", "full"]) {
    const floor = floorAppender(join(folder, `floor-${synchronous}.db`), synchronous);
    const store = sqliteSessionStore({
      path: join(folder, `store-${synchronous}.db`),
      synchronous,
    });
    const floorMicros = await timeAppends(floor.append);
    const latticeMicros = await timeAppends(storeAppender(store));
    const goal = synchronous === "normal";
    for (const [label, fraction, limit] of [
      ["p50", 0.5, 200],
      ["p99", 0.99, 2000],
    ]) {
      const lattice = percentile(latticeMicros, fraction);
      row(
        `SQLite append, 1 entry (${entrySize} B), synchronous "${synchronous}", ${label}`,
        us(percentile(floorMicros, fraction)),
        us(lattice),
        goal ? `< ${limit / 1000} ms` : "(power-loss safe; reported)",
        goal ? (lattice < limit ? "yes" : "NO") : "",
      );
    }
    floor.db.close();
    await store.close();
  }

  const memory = memorySessionStore();
  const memoryMicros = await timeAppends(storeAppender(memory));
  row(
    `memory store append, 1 entry (${entrySize} B), p50 / p99`,
    "",
    `${us(percentile(memoryMicros, 0.5))} / ${us(percentile(memoryMicros, 0.99))}`,
    "(reported)",
    "",
  );

  // Resume: load and parse a 1,000-entry session.
  const path = join(folder, "resume.db");
  const store = sqliteSessionStore({ path });
  for (let n = 0; n < SESSION_ENTRIES; n += 100) {
    await store.append(
      "long",
      n,
      Array.from({ length: 100 }, (_, index) => logEntry(n + index)),
    );
  }
  const raw = new Database(path, { readonly: true });
  const select = raw
    .prepare("SELECT entry FROM lattice_session_entries WHERE session_id = ? ORDER BY seq")
    .pluck();
  const floorLoad = () => select.all("long").map((text) => JSON.parse(text));
  const floorMs = [];
  const latticeMs = [];
  const timeFloorLoad = async () => {
    const started = performance.now();
    const entries = floorLoad();
    if (entries.length !== SESSION_ENTRIES) throw new Error("the floor did not load it whole");
    return performance.now() - started;
  };
  const timeStoreLoad = async () => {
    const started = performance.now();
    const snapshot = await store.load("long");
    if (snapshot.version !== SESSION_ENTRIES) throw new Error("the store did not load it whole");
    return performance.now() - started;
  };
  for (let round = 0; round < LOADS + 3; round++) {
    // Alternate which goes first, so garbage collection weighs on both alike.
    let floorTime;
    let latticeTime;
    if (round % 2 === 0) {
      floorTime = await timeFloorLoad();
      latticeTime = await timeStoreLoad();
    } else {
      latticeTime = await timeStoreLoad();
      floorTime = await timeFloorLoad();
    }
    if (round >= 3) {
      floorMs.push(floorTime);
      latticeMs.push(latticeTime);
    }
  }
  const loadP50 = percentile(latticeMs, 0.5);
  row(
    `load + parse a ${SESSION_ENTRIES.toLocaleString("en")}-entry session (${((entrySize * SESSION_ENTRIES) / 1024 / 1024).toFixed(1)} MB), median`,
    `${percentile(floorMs, 0.5).toFixed(2)} ms`,
    `${loadP50.toFixed(2)} ms`,
    "< 20 ms",
    loadP50 < 20 ? "yes" : "NO",
  );
  raw.close();
  await store.close();
} finally {
  rmSync(folder, { recursive: true, force: true });
}

console.log(
  `\nSession stores (node ${process.version}, ${APPENDS} timed appends per row, files in ${tmpdir()})\n`,
);
console.log(
  "| measure | floor (raw better-sqlite3) | Lattice | goal | met |\n|---|---|---|---|---|",
);
for (const r of rows)
  console.log(`| ${r.measure} | ${r.floor} | ${r.lattice} | ${r.goal} | ${r.met} |`);
