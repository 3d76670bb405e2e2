import { serveQuickstartTools } from "./serve-quickstart-tools.js";

if (!(await serveQuickstartTools())) process.exitCode = 1;
