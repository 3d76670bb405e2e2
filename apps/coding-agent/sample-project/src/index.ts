export { add, multiply } from "./math.js";
export { slugify } from "./strings.js";
