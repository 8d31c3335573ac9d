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
  return new XmlReader(input.startsWith('\ufeff') ? input.slice(1) : input).document();
}

/** A cursor over one document: each method reads one production from `pos` on, or throws. */
class XmlReader {
  private pos = 0;

  constructor(private readonly text: string) {}

  /** The declaration, comments and processing instructions around exactly one root element. */
  document(): ParsedXml {
    const declaration = this.declaration();
    this.misc();
    const root = this.element();
    this.misc();
    if (this.pos < this.text.length) throw this.error('content after the root element');
    return { declaration, root };
  }

  private where(at = this.pos): [number, number] {
    const before = this.text.slice(0, at);
    const line = before.split('\n').length;
    return [line, at - before.lastIndexOf('\n')];
  }

  private error(message: string, at = this.pos): XmlError {
    return new XmlError(message, ...this.where(at));
  }

  private decode(raw: string, at: number): string {
    return raw.replace(/&([^;&<]*);|&/g, (match, name: string | undefined) => {
      if (name === undefined) throw this.error('bare "&"', at);
      if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
      const entity = ENTITIES[name];
      if (entity === undefined) throw this.error(`unknown entity &${name};`, at);
      return entity;
    });
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] as string)) this.pos += 1;
  }

  /** Moves past the first `terminator` from `from` on; `unclosed` is the error when there is none. */
  private skipPast(terminator: string, from: number, unclosed: string): void {
    const end = this.text.indexOf(terminator, from);
    if (end === -1) throw this.error(unclosed);
    this.pos = end + terminator.length;
  }

  private attributes(): Record<string, string> {
    const { text } = this;
    const out: Record<string, string> = {};
    for (;;) {
      const before = this.pos;
      this.skipSpace();
      if (text[this.pos] === '>' || text[this.pos] === '/' || text[this.pos] === '?') return out;
      if (this.pos === before) throw this.error('expected whitespace before an attribute');
      const name = NAME.exec(text.slice(this.pos))?.[0];
      if (!name) throw this.error('expected an attribute name');
      this.pos += name.length;
      this.skipSpace();
      if (text[this.pos] !== '=') throw this.error(`attribute ${name} without "="`);
      this.pos += 1;
      this.skipSpace();
      const quote = text[this.pos];
      if (quote !== '"' && quote !== "'") throw this.error(`attribute ${name} value not quoted`);
      const end = text.indexOf(quote, this.pos + 1);
      if (end === -1) throw this.error(`attribute ${name} value not closed`);
      const raw = text.slice(this.pos + 1, end);
      if (raw.includes('<')) throw this.error(`"<" in attribute ${name}`);
      if (Object.hasOwn(out, name)) throw this.error(`duplicate attribute ${name}`);
      out[name] = this.decode(raw, this.pos);
      this.pos = end + 1;
    }
  }

  private declaration(): Record<string, string> | null {
    if (!this.text.startsWith('<?xml', this.pos)) return null;
    this.pos += 5;
    const declaration = this.attributes();
    this.skipSpace();
    if (!this.text.startsWith('?>', this.pos)) throw this.error('unclosed XML declaration');
    this.pos += 2;
    return declaration;
  }

  /** Whitespace, comments and processing instructions outside the root; a DOCTYPE is refused. */
  private misc(): void {
    const { text } = this;
    for (;;) {
      this.skipSpace();
      if (text.startsWith('<!--', this.pos)) {
        this.skipPast('-->', this.pos + 4, 'unclosed comment');
      } else if (text.startsWith('<?', this.pos) && !text.startsWith('<?xml ', this.pos)) {
        this.skipPast('?>', this.pos, 'unclosed processing instruction');
      } else if (text.startsWith('<!DOCTYPE', this.pos)) {
        throw this.error('a DOCTYPE is not allowed');
      } else return;
    }
  }

  private element(): XmlElement {
    const { text } = this;
    const start = this.pos;
    if (text[this.pos] !== '<') throw this.error('expected an element');
    this.pos += 1;
    const name = NAME.exec(text.slice(this.pos))?.[0];
    if (!name) throw this.error('expected an element name');
    this.pos += name.length;
    const attrs = this.attributes();
    const line = this.where(start)[0];
    if (text.startsWith('/>', this.pos)) {
      this.pos += 2;
      return { name, attributes: attrs, children: [], text: '', line };
    }
    if (text[this.pos] !== '>') throw this.error(`malformed start tag <${name}>`);
    this.pos += 1;
    const { children, own } = this.content(name, start, line);
    return { name, attributes: attrs, children, text: own, line };
  }

  /** An element's content up to and including its end tag (`start`: where its start tag began). */
  private content(
    name: string,
    start: number,
    line: number,
  ): { children: XmlElement[]; own: string } {
    const { text } = this;
    const children: XmlElement[] = [];
    let own = '';
    for (;;) {
      if (this.pos >= text.length) throw this.error(`<${name}> is never closed`, start);
      if (text.startsWith('</', this.pos)) {
        const close = NAME.exec(text.slice(this.pos + 2))?.[0];
        if (close !== name) throw this.error(`</${close ?? '?'}> closes <${name}> (line ${line})`);
        this.pos += 2 + close.length;
        this.skipSpace();
        if (text[this.pos] !== '>') throw this.error(`malformed end tag </${name}>`);
        this.pos += 1;
        return { children, own };
      }
      if (text.startsWith('<!--', this.pos)) {
        this.skipPast('-->', this.pos + 4, 'unclosed comment');
      } else if (text.startsWith('<![CDATA[', this.pos)) {
        const end = text.indexOf(']]>', this.pos);
        if (end === -1) throw this.error('unclosed CDATA');
        own += text.slice(this.pos + 9, end);
        this.pos = end + 3;
      } else if (text.startsWith('<?', this.pos)) {
        this.skipPast('?>', this.pos, 'unclosed processing instruction');
      } else if (text[this.pos] === '<') {
        children.push(this.element());
      } else {
        const end = text.indexOf('<', this.pos);
        const raw = text.slice(this.pos, end === -1 ? text.length : end);
        if (raw.includes(']]>')) throw this.error('"]]>" in text');
        own += this.decode(raw, this.pos);
        this.pos += raw.length;
      }
    }
  }
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
