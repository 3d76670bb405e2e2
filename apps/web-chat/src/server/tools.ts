import { type AnyToolDefinition, tool } from "agent-lattice";
import { z } from "zod/v4";

/** Made-up weather, so the offline chat needs no network. */
const WEATHER: Readonly<Record<string, string>> = {
  paris: "14 °C, light rain",
  tokyo: "22 °C, clear",
  london: "11 °C, overcast",
  "new york": "18 °C, sunny",
  berlin: "9 °C, windy",
};

/** Options of {@link webChatTools}. */
export interface WebChatToolsOptions {
  /** How long `get_weather` takes, in milliseconds. Default 600. */
  readonly weatherMs?: number;
  /** How long `long_job` takes, in milliseconds. Default 20 000. */
  readonly longJobMs?: number;
}

/**
 * The chat's tools:
 * - `get_weather` (concurrency-safe: the calls of one reply run side by side);
 * - `send_email` (each call waits for a person's approval on the page);
 * - `long_job` (sleeps, and stops at once when the run is stopped).
 *
 * @param options - {@link WebChatToolsOptions}.
 * @returns The tools, to pass as `createAgent({ tools })`.
 */
export function webChatTools(options: WebChatToolsOptions = {}): AnyToolDefinition[] {
  const weatherMs = options.weatherMs ?? 600;
  const longJobMs = options.longJobMs ?? 20_000;
  const getWeather = tool(
    "get_weather",
    "Get today's weather in a city. Call it once per city; calls run in parallel.",
    z.object({ city: z.string().min(1).describe("The city, for example Paris") }),
    async ({ city }, { signal }) => {
      await sleep(weatherMs, signal);
      const weather = WEATHER[city.trim().toLowerCase()];
      return { content: `${city}: ${weather ?? "16 °C, partly cloudy"}` };
    },
    { isConcurrencySafe: () => true },
  );
  const sendEmail = tool(
    "send_email",
    "Send an email to one person. Each email waits for the user's approval.",
    z.object({
      to: z.string().min(1).describe("The recipient's name or address"),
      subject: z.string().min(1),
      body: z.string(),
    }),
    async ({ to, subject }, { signal }) => {
      await sleep(200, signal);
      return { content: `Sent "${subject}" to ${to}.` };
    },
    { needsApproval: true },
  );
  const longJob = tool(
    "long_job",
    "Run the long batch job. It takes a while; the user may stop it.",
    z.object({ name: z.string().min(1).describe("Which job to run") }),
    async ({ name }, { signal }) => {
      await sleep(longJobMs, signal);
      return { content: `The job "${name}" finished.` };
    },
  );
  return [getWeather, sendEmail, longJob];
}

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
