import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const rootDir = fileURLToPath(new URL("../../..", import.meta.url));

describe("the web chat as the README runs it (W10)", () => {
  it("W10: the test command builds the page, and `pnpm web` serves it with one line saying where", async () => {
    // `run ci` builds every workspace package that has a build script through turbo: the
    // app's is the page's `vite build`. `pnpm web` builds it and starts the server.
    const app = JSON.parse(readFileSync(join(appDir, "package.json"), "utf8"));
    expect(app.scripts.build).toBe("vite build");
    const root = JSON.parse(readFileSync(join(rootDir, "package.json"), "utf8"));
    expect(root.scripts.web).toContain("--filter @lattice-apps/web-chat start");

    const dataDir = mkdtempSync(join(tmpdir(), "lattice-web-chat-main-"));
    const env = { ...process.env };
    delete env.DEEPSEEK_API_KEY;
    delete env.ANTHROPIC_API_KEY;
    const child = spawn(
      process.execPath,
      [
        "--conditions=@lattice/source",
        "--import",
        "tsx",
        "src/server/main.ts",
        "--port",
        "0",
        "--data-dir",
        dataDir,
      ],
      { cwd: appDir, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no URL printed; stderr: ${stderr}`)),
          60_000,
        );
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          const found = /^web-chat: (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
          if (found !== null) {
            clearTimeout(timer);
            resolve(found[1] as string);
          }
        });
        child.once("exit", (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
      });
      // Exactly one line.
      expect(stdout).toBe(`web-chat: ${url}\n`);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /<script type="module"[^>]* src="([^"]+)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(new URL(script as string, url));
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toContain("javascript");
      // An unknown chat has no history; a bad body is a calm 400 from the real server (W9).
      await expect((await fetch(`${url}/api/chat/never-seen`)).json()).resolves.toEqual({
        messages: [],
      });
      const bad = await fetch(`${url}/api/chat`, { method: "POST", body: "{oops" });
      expect(bad.status).toBe(400);
      const body = await bad.text();
      expect(JSON.parse(body)).toMatchObject({ error: { code: "chat_body_invalid" } });
      expect(body).not.toMatch(/\n\s+at |\/work\/|\/tmp\//);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
