/**
 * `node --import tsx scripts/long-functions.ts [limit]`: lists the functions in `src/` whose body spans more
 * than `limit` lines (default 50), longest first, and their count. Counts every function-like node
 * (declarations, methods, accessors, constructors, function expressions and arrow functions with a block
 * body) from its first to its last line; a function nested in a long one is listed on its own too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOT = join(import.meta.dirname, "..");
const limit = Number(process.argv[2] ?? 50);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(file);
  }
  return "(anonymous)";
}

function isFunctionWithBody(node: ts.Node): node is ts.FunctionLikeDeclaration {
  if (ts.isArrowFunction(node)) return ts.isBlock(node.body);
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)) &&
    node.body !== undefined
  );
}

const long: { where: string; name: string; lines: number }[] = [];
for (const path of sourceFiles(join(ROOT, "src"))) {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (isFunctionWithBody(node)) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > limit)
        long.push({ where: `${relative(ROOT, path)}:${first + 1}`, name: nameOf(node, file), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}
long.sort((a, b) => b.lines - a.lines);
for (const { where, name, lines } of long) console.log(`${String(lines).padStart(4)}  ${name}  ${where}`);
console.log(`${long.length} functions over ${limit} lines`);
