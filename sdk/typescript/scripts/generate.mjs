// Generates what the SDKs take from the API's OpenAPI document (make sdk and
// npm run generate run it; the contract test TestGenerators runs it into a
// temporary folder and fails when the committed files differ):
//
//   src/schema.d.ts      the types of every path and schema (openapi-typescript)
//   src/operations.ts    the document's version, the operations that take an
//                        Idempotency-Key and the paged lists (read by src/index.ts)
//   ../go/client.gen.go  the Go client (oapi-codegen, pinned as a tool of
//                        ../go/go.mod, configured by ../go/oapi-codegen.yaml)
//   ../go/version.gen.go the document's version for the Go client
//   package.json and package-lock.json "version": the document's info.version
//
// Usage: node scripts/generate.mjs [--doc openapi.json] [--ts-out dir]
// [--go-out dir] [--no-package]. Without --doc the merged document is made
// with `go run ./shared/contract/openapi/cmd/openapi` at the repository
// root; the outputs default to src/ and ../go/ of this package.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const root = resolve(here, "..", "..");

const args = process.argv.slice(2);
const opt = { doc: "", tsOut: join(here, "src"), goOut: join(here, "..", "go"), pkg: true };
for (let i = 0; i < args.length; i++) {
  switch (args[i]) {
    case "--doc": opt.doc = resolve(args[++i]); break;
    case "--ts-out": opt.tsOut = resolve(args[++i]); break;
    case "--go-out": opt.goOut = resolve(args[++i]); break;
    case "--no-package": opt.pkg = false; break;
    default:
      console.error(`generate.mjs: unknown argument ${args[i]}`);
      process.exit(2);
  }
}

let tmp = "";
if (!opt.doc) {
  tmp = mkdtempSync(join(tmpdir(), "sdk-generate-"));
  opt.doc = join(tmp, "openapi.json");
  const out = execFileSync("go", ["run", "./shared/contract/openapi/cmd/openapi"], { cwd: root, maxBuffer: 64 << 20 });
  writeFileSync(opt.doc, out);
}

try {
  const doc = JSON.parse(readFileSync(opt.doc, "utf8"));
  const version = doc.info?.version;
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+/.test(version)) {
    throw new Error(`info.version ${JSON.stringify(version)} is not a semantic version`);
  }
  mkdirSync(opt.tsOut, { recursive: true });
  // --empty-objects-unknown: a free object (`type: object` without
  // properties, such as visualisationOnCurrentStamp's values or the
  // document's own `info`) would otherwise be `Record<string, never>`, a
  // type no value can have. --default-non-nullable false: a request field
  // with a default (a rule's `enabled`, a check-in's `trigger`) would
  // otherwise be required.
  const flags = ["--empty-objects-unknown", "--default-non-nullable", "false"];
  execFileSync(join(here, "node_modules", ".bin", "openapi-typescript"), [opt.doc, ...flags, "-o", join(opt.tsOut, "schema.d.ts")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  writeFileSync(join(opt.tsOut, "operations.ts"), operations(doc, version));
  mkdirSync(opt.goOut, { recursive: true });
  writeFileSync(join(opt.goOut, "version.gen.go"), goVersion(version));
  const goModule = join(here, "..", "go");
  execFileSync("go", ["tool", "oapi-codegen", "-config", join(goModule, "oapi-codegen.yaml"), "-o", join(opt.goOut, "client.gen.go"), opt.doc], {
    cwd: goModule,
    env: { ...process.env, GOWORK: "off" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (opt.pkg) {
    setVersion(join(here, "package.json"), (j) => { j.version = version; });
    setVersion(join(here, "package-lock.json"), (j) => {
      j.version = version;
      if (j.packages?.[""]) j.packages[""].version = version;
    });
  }
} finally {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}

// operations is src/operations.ts: the document's version, the operations
// whose parameters include the Idempotency-Key header, and the lists that
// page, with the field holding their items and how they page (key: limit,
// startKey and page.nextKey; number: page and per_page).
function operations(doc, version) {
  const params = doc.components?.parameters ?? {};
  const schemas = doc.components?.schemas ?? {};
  const deref = (x) => {
    while (x && x.$ref) {
      const [, kind, name] = x.$ref.split("/").slice(1);
      x = (kind === "parameters" ? params : schemas)[name];
    }
    return x ?? {};
  };
  const idempotent = [];
  const paged = [];
  for (const path of Object.keys(doc.paths).sort()) {
    const item = doc.paths[path];
    for (const method of ["get", "put", "post", "delete", "patch"]) {
      const op = item[method];
      if (!op) continue;
      const ps = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(deref);
      const has = (inn, name) => ps.some((p) => p.in === inn && p.name.toLowerCase() === name.toLowerCase());
      if (has("header", "Idempotency-Key")) idempotent.push(`${method.toUpperCase()} ${path}`);
      if (method !== "get") continue;
      const by = has("query", "startKey") ? "key" : has("query", "page") && has("query", "per_page") ? "number" : "";
      if (!by) continue;
      const schema = deref(op.responses?.["200"]?.content?.["application/json"]?.schema);
      const fields = new Set();
      for (const alt of schema.oneOf ?? schema.anyOf ?? [schema]) {
        const props = deref(alt).properties ?? {};
        const arrays = Object.keys(props).filter((k) => deref(props[k]).type === "array");
        const field = arrays.includes("items") ? "items" : arrays.length === 1 ? arrays[0] : "";
        if (field) fields.add(field);
      }
      // A list whose legacy shape (an older x-api-version) names its items
      // otherwise pages by the current shape's items, which the SDK asks for.
      if (fields.has("items")) fields.clear(), fields.add("items");
      if (fields.size !== 1) throw new Error(`GET ${path}: cannot tell the field holding the page's items (${[...fields]})`);
      paged.push([path, [...fields][0], by]);
    }
  }
  const lines = [
    "// Code generated by scripts/generate.mjs from the OpenAPI document. DO NOT EDIT.",
    "// make sdk (or npm run generate) regenerates it.",
    "",
    "/** The version of the API description this SDK was generated from (info.version). */",
    `export const DOCUMENT_VERSION = ${JSON.stringify(version)};`,
    "",
    "/** The operations (\"METHOD /path\") that take an Idempotency-Key header. */",
    "export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set([",
    ...idempotent.map((o) => `  ${JSON.stringify(o)},`),
    "]);",
    "",
    "/**",
    " * The lists that page: the field of the response holding the page's items,",
    " * and how the list pages (key: limit, startKey and page.nextKey; number:",
    " * page and per_page).",
    " */",
    "export const PAGED_LISTS = {",
    ...paged.map(([p, f, by]) => `  ${JSON.stringify(p)}: { items: ${JSON.stringify(f)}, by: ${JSON.stringify(by)} },`),
    "} as const;",
    "",
  ];
  return lines.join("\n");
}

// goVersion is sdk/go/version.gen.go.
function goVersion(version) {
  return [
    "// Code generated by sdk/typescript/scripts/generate.mjs from the OpenAPI document. DO NOT EDIT.",
    "",
    "package sdk",
    "",
    "// DocumentVersion is the version of the API description this client was",
    "// generated from (the document's info.version).",
    `const DocumentVersion = ${JSON.stringify(version)}`,
    "",
  ].join("\n");
}

// setVersion applies edit to a JSON file of npm's (two-space indent, final
// newline) and writes it back when that changed it.
function setVersion(file, edit) {
  const text = readFileSync(file, "utf8");
  const j = JSON.parse(text);
  edit(j);
  const out = JSON.stringify(j, null, 2) + "\n";
  if (out !== text) writeFileSync(file, out);
}
