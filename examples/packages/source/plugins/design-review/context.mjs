// Emits a portable add_context result naming the design files of the
// project directory it is given. It reads only that directory's listing.
import { readdirSync } from "node:fs";

const projectDir = process.argv[2] ?? ".";
let names = [];
try {
  names = readdirSync(projectDir).filter((n) => /\.(css|scss|fig|sketch|tokens\.json)$/.test(n));
} catch {
  names = [];
}
const context = names.length
  ? `Design files in the project: ${names.slice(0, 20).join(", ")}. Review contrast.`
  : "No design files at the project root. Review contrast.";
process.stdout.write(JSON.stringify({ kind: "add_context", context }));
