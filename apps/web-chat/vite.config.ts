import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The page: `vite build` writes it to dist/, which the app's server serves. `vite` (dev) proxies
// the API to a server started with `PORT=8787 npx -y pnpm@12.4.2 start` in another terminal.
export default defineConfig({
  plugins: [react()],
  // One bundle of about 450 kB (React and the AI SDK's chat client): fine for a local app.
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 600 },
  server: { proxy: { "/api": "http://127.0.0.1:8787" } },
});
