import { extractInvoice } from "./extract-invoice.js";
import { runQuickstart } from "./quickstart.js";

const result = await runQuickstart();
if (result === undefined || result.isError) process.exitCode = 1;
// Typed output: an invoice's text in, a validated `Invoice` object out.
const invoice = await extractInvoice();
if (invoice.subtype !== "success") process.exitCode = 1;
