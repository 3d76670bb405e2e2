// Vitest global setup: builds the page (`vite build` into dist/) when it is missing or older
// than its sources, so the browser tests serve what the sources say. CI builds it first
// (`turbo run build`), and then this does nothing.
import { buildPageIfNeeded } from "../server/page-build.js";

export default async function buildPage(): Promise<void> {
  await buildPageIfNeeded();
}
