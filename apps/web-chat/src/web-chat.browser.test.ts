import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureChromium, type LaunchedChromium, launchChromium } from "@lattice/test-servers";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { card, playPictureChat, send, waitIdle } from "./fixtures/chat-page.js";
import { PAGE_DIR } from "./server/page-build.js";
import { startWebChatServer, type WebChatServer } from "./server/web-chat-server.js";

// Installs Debian's Chromium when it is missing (as root), or says what to install.
const chromiumPath = ensureChromium();

describe.skipIf(chromiumPath === null)("the web chat in headless Chromium (W7, W8)", () => {
  let server: WebChatServer;
  let browser: LaunchedChromium;
  let folder: string;
  const problems: string[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "lattice-web-chat-test-"));
    [server, browser] = await Promise.all([
      // Offline (no keys), a temp data dir; the long job is long enough to be stopped.
      startWebChatServer({
        port: 0,
        dataDir: join(folder, "data"),
        pageDir: PAGE_DIR,
        env: {},
        tools: { weatherMs: 500, longJobMs: 20_000 },
      }),
      launchChromium(chromiumPath as string),
    ]);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  afterEach(() => {
    // No console errors and no page errors, in any test.
    expect(problems).toEqual([]);
  });

  async function open(chatId = randomUUID()): Promise<Page> {
    const page = await browser.context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${server.url}/?chat=${chatId}`);
    await page.getByLabel("Message").waitFor();
    return page;
  }

  it("W7, W8: a typed message gets a reply that streams in", async () => {
    const page = await open();
    // Record the length of the assistant's text at each change of the page.
    await page.evaluate(() => {
      const lengths: number[] = [];
      (window as unknown as { lengths: number[] }).lengths = lengths;
      new MutationObserver(() => {
        const text = document.querySelector(".message.assistant .text")?.textContent ?? "";
        if (text.length > 0 && text.length !== lengths.at(-1)) lengths.push(text.length);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await send(page, "hello there");
    await expect.poll(() => page.locator(".message.user").textContent()).toBe("hello there");
    await page.getByText("press Stop while it runs").waitFor();
    await waitIdle(page);
    const lengths = await page.evaluate(() => (window as unknown as { lengths: number[] }).lengths);
    // The text grew in several steps, not in one piece.
    expect(lengths.length).toBeGreaterThanOrEqual(3);
    expect([...lengths].sort((a, b) => a - b)).toEqual(lengths);
    await page.close();
  });

  it("W7, W8: two calls of one concurrent batch run show side by side, with status and timing", async () => {
    const page = await open();
    await send(page, "What's the weather in Paris and Tokyo?");
    await page.getByText("Both lookups ran side by side").waitFor();
    const paris = card(page, "get_weather", "Paris");
    const tokyo = card(page, "get_weather", "Tokyo");
    await expect.poll(() => paris.getAttribute("data-status")).toBe("completed");
    await expect.poll(() => tokyo.getAttribute("data-status")).toBe("completed");
    await expect(paris.locator(".timing").textContent()).resolves.toMatch(/waited .* · ran .*/);
    // One run of the batch's plan holds both, marked concurrent.
    const run = page.locator('.batch-run[data-concurrent="true"]');
    await expect(run.locator(".tool-card").count()).resolves.toBe(2);
    // On one row: the same top, one beside the other.
    const [a, b] = [await paris.boundingBox(), await tokyo.boundingBox()];
    expect(a && b).toBeTruthy();
    expect(Math.abs(a!.y - b!.y)).toBeLessThan(2);
    expect(b!.x).toBeGreaterThanOrEqual(a!.x + a!.width);
    // The run's tool timeline, from the trace the app recorded.
    const href = await page.getByRole("link", { name: "Timeline" }).getAttribute("href");
    const timeline = await page.request.get(`${server.url}${href}`);
    expect(timeline.status()).toBe(200);
    expect(await timeline.text()).toContain("get_weather");
    await page.close();
  });

  it("W7, W8: one call approved and one denied; both outcomes show, and the reply says so; a reload shows the whole chat", async () => {
    const chatId = randomUUID();
    const page = await open(chatId);
    await send(page, "Email the report to ann and bob");
    const ann = card(page, "send_email", "ann");
    const bob = card(page, "send_email", "bob");
    await expect.poll(() => ann.getAttribute("data-status")).toBe("needs approval");
    await expect.poll(() => bob.getAttribute("data-status")).toBe("needs approval");
    await ann.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => ann.getAttribute("data-status")).toBe("approved");
    await bob.getByRole("button", { name: "Deny" }).click();
    await page.getByText("The email to ann was sent.").waitFor();
    await page.getByText("I did not send the email to bob: you denied it").waitFor();
    await waitIdle(page);
    await expect.poll(() => ann.getAttribute("data-status")).toBe("completed");
    await expect.poll(() => bob.getAttribute("data-status")).toBe("denied");
    // The protocol's own state for a denied call, not an error that mentions a denial.
    await expect(bob.getAttribute("data-state")).resolves.toBe("output-denied");
    await expect(ann.locator(".output").textContent()).resolves.toContain('Sent "Report" to ann.');

    await send(page, "What's the weather in Tokyo?");
    await page.getByText("Both lookups ran side by side").waitFor();
    await waitIdle(page);

    // Reload: the same chat, from the SQLite session.
    await page.reload();
    await page.getByText("I did not send the email to bob: you denied it").waitFor();
    await expect(page.locator(".message.user").allTextContents()).resolves.toEqual([
      "Email the report to ann and bob",
      "What's the weather in Tokyo?",
    ]);
    await expect
      .poll(() => card(page, "send_email", "ann").getAttribute("data-status"))
      .toBe("completed");
    await expect
      .poll(() => card(page, "send_email", "bob").getAttribute("data-status"))
      .toBe("denied");
    await expect(card(page, "send_email", "bob").getAttribute("data-state")).resolves.toBe(
      "output-denied",
    );
    await expect(card(page, "get_weather", "Tokyo").count()).resolves.toBe(1);
    await page.close();
  });

  it("W7, W8: Stop ends a run while its slow tool sleeps; the page says so, and the chat goes on", async () => {
    const page = await open();
    await send(page, "Run the long job");
    const job = card(page, "long_job", "nightly-report");
    await expect.poll(() => job.getAttribute("data-status")).toBe("running");
    const started = Date.now();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByText("Stopped: you stopped this run").waitFor();
    await expect(page.getByRole("status").textContent()).resolves.toContain("stopped");
    await expect.poll(() => job.getAttribute("data-status")).toBe("stopped");
    // Well before the job's 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);

    await send(page, "What's the weather in Paris?");
    await page.getByText("Both lookups ran side by side").waitFor();
    await waitIdle(page);
    await expect(page.locator(".message.user").count()).resolves.toBe(2);
    await page.close();
  });

  it("W8: every control is reachable by keyboard, with a visible focus", async () => {
    const page = await open();
    await send(page, "Email the report to ann and bob");
    await card(page, "send_email", "bob").getByRole("button", { name: "Deny" }).waitFor();
    await page.getByLabel("Message").fill("run the long job");

    const reached = async (): Promise<string[]> => {
      const names: string[] = [];
      // From the top of the page: a click on the heading moves the start of Tab there.
      await page.locator("h1").click();
      for (let step = 0; step < 20; step++) {
        await page.keyboard.press("Tab");
        const focused = await page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          if (element === null || element === document.body) return null;
          const outline = getComputedStyle(element).outlineStyle;
          const name =
            element.tagName === "INPUT"
              ? `input:${document.querySelector(`label[for="${element.id}"]`)?.textContent}`
              : `${element.tagName.toLowerCase()}:${element.textContent?.trim()}`;
          return { name, outline };
        });
        if (focused === null) break;
        expect(focused.outline, `${focused.name} shows its focus`).not.toBe("none");
        names.push(focused.name);
      }
      return names;
    };

    const idle = await reached();
    expect(idle).toEqual(
      expect.arrayContaining([
        "a:New chat",
        "button:Approve",
        "button:Deny",
        "a:Timeline",
        "input:Message",
        "button:Send",
      ]),
    );
    // The controls are reached in reading order: the calls' buttons, then the message box.
    expect(idle.indexOf("button:Approve")).toBeLessThan(idle.indexOf("input:Message"));

    // Enter on a focused Deny answers the call, by keyboard alone.
    await card(page, "send_email", "ann").getByRole("button", { name: "Deny" }).focus();
    await page.keyboard.press("Enter");
    await card(page, "send_email", "bob").getByRole("button", { name: "Deny" }).focus();
    await page.keyboard.press("Space");
    await page.getByText("I did not send the email to ann").waitFor();
    await waitIdle(page);

    // While a run streams, Stop is in the tab order.
    await page.getByLabel("Message").focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => card(page, "long_job", "nightly").getAttribute("data-status"))
      .toBe("running");
    expect(await reached()).toContain("button:Stop");
    await page.getByRole("button", { name: "Stop" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Stopped: you stopped this run").waitFor();
    await page.close();
  });

  it("W8: the README's picture, taken into a temp folder (H30)", async () => {
    const page = await open();
    await playPictureChat(page);
    const path = join(folder, "web-chat.png");
    await page.screenshot({ path, fullPage: true });
    expect(statSync(path).size).toBeGreaterThan(10_000);
    await page.close();
  });
});
