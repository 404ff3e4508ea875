import { messageText, type ServiceFailure, ServiceFailureError } from "./service-error.js";

/** One element of a small XML document: its name, its child elements in order, and its text. */
export interface XmlElement {
  readonly name: string;
  readonly children: readonly XmlElement[];
  /** The element's own character data (entities decoded); empty when it only holds elements. */
  readonly text: string;
}

// The admin bodies (service properties, ACLs) are a few KiB at most; deeper nesting is never valid.
const MAX_DEPTH = 16;

// Sticky: each matches exactly at `lastIndex`, so the reader never copies the rest of the body.
const NAME = /<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)/y;
const ATTRIBUTES = /(?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*\s*(\/?)>/y;

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/**
 * Reads the XML the admin operations take (Set Table Service Properties, Set Table ACL): elements,
 * attributes (ignored), character data, CDATA, comments and the XML declaration. Anything else — a
 * DOCTYPE (no entity expansion), a second root, unclosed or mismatched tags, text outside the root —
 * is the service's 400 InvalidXmlDocument.
 */
export function parseXml(text: string): XmlElement {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let at = 0;

  const fail = (): never => {
    throw invalidXmlDocument();
  };
  const skipMisc = () => {
    for (;;) {
      while (at < source.length && /\s/.test(source[at] as string)) at++;
      if (source.startsWith("<?", at)) {
        const end = source.indexOf("?>", at + 2);
        if (end < 0) fail();
        at = end + 2;
      } else if (source.startsWith("<!--", at)) {
        const end = source.indexOf("-->", at + 4);
        if (end < 0) fail();
        at = end + 3;
      } else return;
    }
  };

  const element = (depth: number): XmlElement => {
    if (depth > MAX_DEPTH || source[at] !== "<") fail();
    NAME.lastIndex = at;
    const nameMatch = NAME.exec(source);
    if (nameMatch === null) return fail();
    const name = nameMatch[1] as string;
    at += nameMatch[0].length;
    // Attributes (xmlns and the like) carry nothing the admin bodies need; they must still be well formed.
    ATTRIBUTES.lastIndex = at;
    const attributes = ATTRIBUTES.exec(source);
    if (attributes === null) return fail();
    at += attributes[0].length;
    if (attributes[1] === "/") return { name: localName(name), children: [], text: "" };
    const children: XmlElement[] = [];
    let textOut = "";
    for (;;) {
      if (at >= source.length) fail();
      if (source.startsWith("</", at)) {
        const close = `</${name}`;
        if (!source.startsWith(close, at)) fail();
        at += close.length;
        while (/\s/.test(source[at] ?? "")) at++;
        if (source[at] !== ">") fail();
        at++;
        return { name: localName(name), children, text: textOut };
      }
      if (source.startsWith("<!--", at)) {
        const end = source.indexOf("-->", at + 4);
        if (end < 0) fail();
        at = end + 3;
      } else if (source.startsWith("<![CDATA[", at)) {
        const end = source.indexOf("]]>", at + 9);
        if (end < 0) fail();
        textOut += source.slice(at + 9, end);
        at = end + 3;
      } else if (source[at] === "<") {
        children.push(element(depth + 1));
      } else {
        const end = source.indexOf("<", at);
        if (end < 0) fail();
        textOut += decodeEntities(source.slice(at, end));
        at = end;
      }
    }
  };

  skipMisc();
  if (source.startsWith("<!", at)) fail(); // DOCTYPE and friends: never expanded, always refused
  const root = element(0);
  skipMisc();
  if (at !== source.length) fail();
  return root;
}

/** Escapes text for an XML element's content. */
export function escapeXml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The service's answer to a body that is not the XML it expects (400 InvalidXmlDocument). */
export function invalidXmlDocument(): ServiceFailureError {
  return new ServiceFailureError(400, "InvalidXmlDocument", "XML specified is not syntactically valid.");
}

/** The service's answer to an XML value out of range or in the wrong format (400 InvalidXmlNodeValue). */
export function invalidXmlNodeValue(node: string): ServiceFailureError {
  return new ServiceFailureError(
    400,
    "InvalidXmlNodeValue",
    `The value for one of the XML nodes is not in the correct format.\nXmlNodeName:${node}`,
  );
}

/**
 * The children of an element by name: each at most once, only the `allowed` names, and every `required`
 * one present; anything else breaks the schema (400 InvalidXmlDocument).
 */
export function childrenByName(
  element: XmlElement,
  allowed: readonly string[],
  required: readonly string[],
): Map<string, XmlElement> {
  const found = new Map<string, XmlElement>();
  for (const child of element.children) {
    if (!allowed.includes(child.name) || found.has(child.name)) throw invalidXmlDocument();
    found.set(child.name, child);
  }
  if (required.some((name) => !found.has(name))) throw invalidXmlDocument();
  return found;
}

/** The text of an element that must hold no elements; absent is empty. */
export function leaf(element: XmlElement | undefined): string {
  if (element === undefined) return "";
  if (element.children.length > 0) throw invalidXmlDocument();
  return element.text;
}

function localName(name: string): string {
  const colon = name.indexOf(":");
  return colon < 0 ? name : name.slice(colon + 1);
}

function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9A-Fa-f]+|#\d+|[a-z]+);|&/g, (match, entity: string | undefined) => {
    if (entity === undefined) throw invalidXmlDocument(); // a bare '&'
    if (entity.startsWith("#")) {
      const code = entity[1] === "x" ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      if (!(code > 0 && code <= 0x10ffff)) throw invalidXmlDocument();
      return String.fromCodePoint(code);
    }
    const decoded = ENTITIES[entity];
    if (decoded === undefined) throw invalidXmlDocument();
    return decoded ?? match;
  });
}

/**
 * The XML error body the service sends for its XML operations (service properties and stats, table
 * ACLs): `<Error><Code>…</Code><Message>…</Message></Error>`, which the SDKs read the error code from.
 */
export function errorXml(failure: ServiceFailure, requestId: string, date: Date): string {
  const value = messageText(failure, requestId, date);
  return `<?xml version="1.0" encoding="utf-8"?><Error><Code>${escapeXml(failure.code)}</Code><Message>${escapeXml(value)}</Message></Error>`;
}
