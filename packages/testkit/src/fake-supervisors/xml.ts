/**
 * A small, strict XML reader for the fake `schtasks` (and for tests that check generated task XML
 * is well-formed): elements, attributes, text, CDATA, comments, processing instructions, the five
 * predefined entities and character references. A DOCTYPE, an unknown entity, a mismatched or
 * unclosed tag, a duplicated attribute, a second root or text outside the root is an error with
 * its line and column — never a guess.
 */

export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  /** The element's own text (CDATA included), entities decoded, not trimmed. */
  readonly text: string;
  readonly line: number;
}

export class XmlError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`(${line},${column}): ${message}`);
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9._:-]*/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export interface ParsedXml {
  readonly declaration: Readonly<Record<string, string>> | null;
  readonly root: XmlElement;
}

export function parseXml(input: string): ParsedXml {
  const text = input.startsWith('\ufeff') ? input.slice(1) : input;
  let pos = 0;
  const where = (at = pos): [number, number] => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    return [line, at - before.lastIndexOf('\n')];
  };
  const error = (message: string, at = pos): XmlError => new XmlError(message, ...where(at));
  const decode = (raw: string, at: number): string =>
    raw.replace(/&([^;&<]*);|&/g, (match, name: string | undefined) => {
      if (name === undefined) throw error('bare "&"', at);
      if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
      const entity = ENTITIES[name];
      if (entity === undefined) throw error(`unknown entity &${name};`, at);
      return entity;
    });
  const skipSpace = () => {
    while (pos < text.length && /\s/.test(text[pos] as string)) pos += 1;
  };
  const attributes = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (;;) {
      const before = pos;
      skipSpace();
      if (text[pos] === '>' || text[pos] === '/' || text[pos] === '?') return out;
      if (pos === before) throw error('expected whitespace before an attribute');
      const name = NAME.exec(text.slice(pos))?.[0];
      if (!name) throw error('expected an attribute name');
      pos += name.length;
      skipSpace();
      if (text[pos] !== '=') throw error(`attribute ${name} without "="`);
      pos += 1;
      skipSpace();
      const quote = text[pos];
      if (quote !== '"' && quote !== "'") throw error(`attribute ${name} value not quoted`);
      const end = text.indexOf(quote, pos + 1);
      if (end === -1) throw error(`attribute ${name} value not closed`);
      const raw = text.slice(pos + 1, end);
      if (raw.includes('<')) throw error(`"<" in attribute ${name}`);
      if (Object.hasOwn(out, name)) throw error(`duplicate attribute ${name}`);
      out[name] = decode(raw, pos);
      pos = end + 1;
    }
  };
  const misc = () => {
    for (;;) {
      skipSpace();
      if (text.startsWith('<!--', pos)) {
        const end = text.indexOf('-->', pos + 4);
        if (end === -1) throw error('unclosed comment');
        pos = end + 3;
      } else if (text.startsWith('<?', pos) && !text.startsWith('<?xml ', pos)) {
        const end = text.indexOf('?>', pos);
        if (end === -1) throw error('unclosed processing instruction');
        pos = end + 2;
      } else if (text.startsWith('<!DOCTYPE', pos)) {
        throw error('a DOCTYPE is not allowed');
      } else return;
    }
  };

  let declaration: Record<string, string> | null = null;
  if (text.startsWith('<?xml', pos)) {
    pos += 5;
    declaration = attributes();
    skipSpace();
    if (!text.startsWith('?>', pos)) throw error('unclosed XML declaration');
    pos += 2;
  }
  misc();

  const element = (): XmlElement => {
    const start = pos;
    if (text[pos] !== '<') throw error('expected an element');
    pos += 1;
    const name = NAME.exec(text.slice(pos))?.[0];
    if (!name) throw error('expected an element name');
    pos += name.length;
    const attrs = attributes();
    const line = where(start)[0];
    if (text.startsWith('/>', pos)) {
      pos += 2;
      return { name, attributes: attrs, children: [], text: '', line };
    }
    if (text[pos] !== '>') throw error(`malformed start tag <${name}>`);
    pos += 1;
    const children: XmlElement[] = [];
    let own = '';
    for (;;) {
      if (pos >= text.length) throw error(`<${name}> is never closed`, start);
      if (text.startsWith('</', pos)) {
        const close = NAME.exec(text.slice(pos + 2))?.[0];
        if (close !== name) throw error(`</${close ?? '?'}> closes <${name}> (line ${line})`);
        pos += 2 + close.length;
        skipSpace();
        if (text[pos] !== '>') throw error(`malformed end tag </${name}>`);
        pos += 1;
        return { name, attributes: attrs, children, text: own, line };
      }
      if (text.startsWith('<!--', pos)) {
        const end = text.indexOf('-->', pos + 4);
        if (end === -1) throw error('unclosed comment');
        pos = end + 3;
      } else if (text.startsWith('<![CDATA[', pos)) {
        const end = text.indexOf(']]>', pos);
        if (end === -1) throw error('unclosed CDATA');
        own += text.slice(pos + 9, end);
        pos = end + 3;
      } else if (text.startsWith('<?', pos)) {
        const end = text.indexOf('?>', pos);
        if (end === -1) throw error('unclosed processing instruction');
        pos = end + 2;
      } else if (text[pos] === '<') {
        children.push(element());
      } else {
        const end = text.indexOf('<', pos);
        const raw = text.slice(pos, end === -1 ? text.length : end);
        if (raw.includes(']]>')) throw error('"]]>" in text');
        own += decode(raw, pos);
        pos += raw.length;
      }
    }
  };
  const root = element();
  misc();
  if (pos < text.length) throw error('content after the root element');
  return { declaration, root };
}

/** The first child named `name`. */
export const child = (element: XmlElement | undefined, name: string): XmlElement | undefined =>
  element?.children.find((c) => c.name === name);

/** The text of the element at `path` (child names), trimmed, or undefined. */
export function textAt(element: XmlElement | undefined, ...path: string[]): string | undefined {
  let current = element;
  for (const name of path) current = child(current, name);
  return current?.text.trim();
}
