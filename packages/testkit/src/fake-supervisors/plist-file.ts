/**
 * Reading a launchd property list for the fake `launchctl`, as strictly as launchd does. The values
 * come from a real plist parser (the `plist` package from npm); before it sees the text, the
 * document's structure is checked against the property-list DTD (Apple, "PropertyList-1.0.dtd";
 * plist(5)), because the npm parser forgives what CoreFoundation does not: `<integer>abc</integer>`
 * becomes `null`, a `<key>` without a value becomes `""`, and two values under `<plist>` become an
 * array. A test reads the same documents with Python's `plistlib` and checks that both agree on
 * what is a property list and on its values (test/launchctl-plist.test.ts).
 *
 * Only XML property lists: launchd also reads binary ones, which fleet never writes, and the fake
 * refuses them rather than half-read them.
 */
import { parse as parsePlistXml, type PlistValue } from 'plist';
import { parseXml, XmlError, type XmlElement } from './xml.js';

export class PlistError extends Error {}

export type { PlistValue };
export type PlistDict = { readonly [key: string]: PlistValue };

/** The one DOCTYPE a property list carries (plist(5)); the strict XML reader takes no DOCTYPE. */
const DOCTYPE =
  /<!DOCTYPE\s+plist\s+PUBLIC\s+"-\/\/Apple\/\/DTD PLIST 1\.0\/\/EN"\s+"http:\/\/www\.apple\.com\/DTDs\/PropertyList-1\.0\.dtd"\s*>/;

const INTEGER = /^\s*[+-]?(\d+|0x[0-9a-fA-F]+)\s*$/;
const REAL = /^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|-inf|nan)\s*$/i;
const DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

/** Checks one value element (and what it holds) against the DTD's content model. */
function checkValue(element: XmlElement, at: string): void {
  const leaf = (ok: boolean, what: string) => {
    if (element.children.length > 0)
      throw new PlistError(`${at}: <${element.name}> holds elements`);
    if (!ok) throw new PlistError(`${at}: ${JSON.stringify(element.text)} is not ${what}`);
  };
  switch (element.name) {
    case 'string':
      return leaf(true, 'a string');
    case 'integer':
      return leaf(INTEGER.test(element.text), 'an integer');
    case 'real':
      return leaf(REAL.test(element.text), 'a real');
    case 'date':
      return leaf(DATE.test(element.text.trim()), 'an ISO 8601 date');
    case 'data':
      return leaf(BASE64.test(element.text), 'base64 data');
    case 'true':
    case 'false':
      return leaf(element.text.trim() === '', 'empty');
    case 'array':
      element.children.forEach((item, index) => checkValue(item, `${at}[${index}]`));
      return;
    case 'dict': {
      const seen = new Set<string>();
      for (let index = 0; index < element.children.length; index += 2) {
        const key = element.children[index] as XmlElement;
        const value = element.children[index + 1];
        if (key.name !== 'key')
          throw new PlistError(`${at}: <${key.name}> where a <key> belongs (line ${key.line})`);
        if (key.children.length > 0) throw new PlistError(`${at}: a <key> holds elements`);
        if (value === undefined)
          throw new PlistError(`${at}: the key ${JSON.stringify(key.text)} has no value`);
        if (seen.has(key.text))
          throw new PlistError(`${at}: the key ${JSON.stringify(key.text)} appears twice`);
        seen.add(key.text);
        checkValue(value, `${at}.${key.text}`);
      }
      return;
    }
    default:
      throw new PlistError(`${at}: <${element.name}> is not a property-list element`);
  }
}

/**
 * Parses an XML property list whose top-level value is a dictionary (what launchd.plist(5)
 * requires of a job). Throws {@link PlistError} with what is wrong.
 */
export function parsePlist(bytes: Buffer | string): PlistDict {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('utf8');
  if (text.startsWith('bplist'))
    throw new PlistError('a binary property list (the fake reads XML property lists only)');
  let root: XmlElement;
  try {
    root = parseXml(text.replace(DOCTYPE, '')).root;
  } catch (error) {
    if (error instanceof XmlError) throw new PlistError(`not well-formed XML ${error.message}`);
    throw error;
  }
  if (root.name !== 'plist') throw new PlistError(`the root element is <${root.name}>`);
  const version = root.attributes['version'];
  if (version !== undefined && version !== '1.0')
    throw new PlistError(`plist version ${JSON.stringify(version)} (only 1.0 exists)`);
  if (root.children.length !== 1)
    throw new PlistError(`<plist> holds ${root.children.length} values, not one`);
  checkValue(root.children[0] as XmlElement, 'plist');
  const value = parsePlistXml(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PlistError('the top-level value is not a <dict>');
  }
  if (value instanceof Date || value instanceof Uint8Array)
    throw new PlistError('the top-level value is not a <dict>');
  return value;
}
