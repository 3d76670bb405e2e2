import { expect, it } from "vitest";
import { runTeamDemo } from "./team-demo.js";

it("runs the team offline: the lead delegates to the researcher, hands off to the writer, and gets the brief back", async () => {
  const lines: string[] = [];
  const { final, runs } = await runTeamDemo((line) => lines.push(line), {});
  expect(lines[0]).toMatch(
    /^Lattice team: offline, against the scripted model server at http:\/\/127\.0\.0\.1:\d+/,
  );
  // "who: what" for every printed action, in the order printed.
  const story = lines
    .filter((line) => line.includes("│"))
    .map((line) => {
      const [who = "", what = ""] = line.split("│").map((part) => part.trim());
      return `${who}: ${what}`;
    });
  const by = (who: string) => story.filter((entry) => entry.startsWith(`${who}: `));
  // Each entry must start with its prefix; a mismatch shows the whole entry in the diff.
  const expectInOrder = (entries: string[], prefixes: string[]) => {
    const shown = entries.map((entry, index) => {
      const prefix = prefixes[index];
      return prefix !== undefined && entry.startsWith(prefix) ? prefix : entry;
    });
    expect(shown).toEqual(prefixes);
  };
  expectInOrder(by("lead"), [
    "lead: ▶ starts run_1 on a task from the user",
    'lead: says "First the facts."',
    "lead: → delegates to researcher (call mode)",
    "lead: → hands off to writer",
    'lead: ← hand_off_to_writer: "Handed off to',
    'lead: says "The writer is drafting the brief."',
    "lead: ■ finishes run_1 (success, 3 turns)",
    "lead: ▶ starts run_3 on a reply from writer",
    'lead: says "Final brief: Mont-Saint-Michel',
    "lead: ■ finishes run_3 (success, 1 turn)",
  ]);
  expectInOrder(by("researcher"), [
    'researcher: → calls lookup({"topic":"tides"})',
    'researcher: → calls lookup({"topic":"visitors"})',
    "researcher: ← lookup",
    "researcher: ← lookup",
    'researcher: says "- The tide range reaches 14 m',
    "researcher: answers lead",
  ]);
  expectInOrder(by("writer"), [
    "writer: ▶ starts run_2 on a task handed off by lead",
    "writer: says \"Mont-Saint-Michel's tides",
    "writer: ■ finishes run_2 (success, 1 turn)",
    "writer: ✉ replies to lead (mail_",
  ]);
  // Across members: the research happens inside the lead's delegate call; the writer starts
  // after the handoff; its reply starts the lead's second run.
  const at = (prefix: string) => story.findIndex((entry) => entry.startsWith(prefix));
  expect(at("lead: → delegates")).toBeLessThan(at("researcher: → calls lookup"));
  expect(at("researcher: answers lead")).toBeLessThan(at("lead: → hands off to writer"));
  expect(at("lead: → hands off to writer")).toBeLessThan(at("writer: ▶ starts run_2"));
  expect(at("writer: ✉ replies to lead")).toBeLessThan(at("lead: ▶ starts run_3"));

  expect(runs).toEqual(["lead:run_1", "writer:run_2", "lead:run_3"]);
  expect(final).toMatchObject({ subtype: "success" });
  expect(final?.result).toMatch(/^Final brief: Mont-Saint-Michel's tides rise up to 14 m/);
  expect(lines.at(-1)).toMatch(
    /^Team idle after 3 runs \(lead:run_1, writer:run_2, lead:run_3\); usage \d+ in \/ \d+ out\.$/,
  );
});
