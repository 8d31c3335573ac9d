import { expect } from 'chai';
import { FleetError } from '../src/errors.js';
import { sourceOfCapture } from '../src/config/adopt.js';
import {
  escapeLiteralBraces,
  placeholder,
  renderTemplate,
  reverseSubstitute,
  scanPlaceholders,
  secretNames,
  type RenderOptions,
} from '../src/render/template.js';

/** The FleetError `fn` throws; fails the test when it throws nothing or something else. */
function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

const FILE = 'domains/router/router.yaml';
const HOST_FILE = 'hosts/alpha.yaml';

function options(overrides: Partial<RenderOptions> = {}): RenderOptions {
  return {
    file: FILE,
    variables: { node_id: 'node-01', fqdn: 'node-01.lan', port: '7701' },
    allowed: ['node_id', 'fqdn', 'port', 'absent'],
    hostFile: HOST_FILE,
    ...overrides,
  };
}

describe('render/template', () => {
  describe('placeholder()', () => {
    it('spells placeholders canonically', () => {
      expect(placeholder('host', 'node_id')).to.equal('{{ host.node_id }}');
      expect(placeholder('secret', 'API_KEY')).to.equal('{{ secret.API_KEY }}');
    });
  });

  describe('renderTemplate: the two placeholder forms', () => {
    const cases: [title: string, input: string, expected: string][] = [
      ['canonical spacing', 'id: {{ host.node_id }}', 'id: node-01'],
      ['no spaces', 'id: {{host.node_id}}', 'id: node-01'],
      ['extra spaces and tabs', 'id: {{   host.node_id\t}}', 'id: node-01'],
      ['newlines inside the braces', 'id: {{\nhost.node_id\n}}', 'id: node-01'],
      ['several on one line', '{{ host.fqdn }}:{{ host.port }}', 'node-01.lan:7701'],
      ['a value next to braces', '{{{ host.port }}}', '{7701}'],
      [
        'secret placeholders stay as they are',
        'key: {{ secret.API_KEY }}',
        'key: {{ secret.API_KEY }}',
      ],
      [
        'secret with odd spacing stays byte-exact',
        'k: {{secret.API_KEY}}',
        'k: {{secret.API_KEY}}',
      ],
      ['handlebars blocks are text', '{{#each items}}x{{/each}}', '{{#each items}}x{{/each}}'],
      ['go-template dot syntax is text', 'v: {{ .Values.port }}', 'v: {{ .Values.port }}'],
      ['a space after the dot is not a placeholder', '{{ host. node_id }}', '{{ host. node_id }}'],
      ['spaced single braces are text', '{ { host.node_id } }', '{ { host.node_id } }'],
      ['empty braces are text', '{{}} and {{ }}', '{{}} and {{ }}'],
      ['no placeholders at all', 'plain text\n', 'plain text\n'],
    ];
    for (const [title, input, expected] of cases) {
      it(title, () => {
        expect(renderTemplate(input, options())).to.equal(expected);
      });
    }
  });

  describe('renderTemplate: unsupported placeholders fail closed', () => {
    const cases: [input: string, line: number][] = [
      ['{{ foo }}', 1],
      ['a\n{{ hostx.a }}', 2],
      ['a\nb\n{{ HOST.node_id }}', 3],
      ['{{ host.node_id.extra }}', 1],
      ['{{ host.node-id }}', 1],
      ['{{ secret.API-KEY }}', 1],
      ['{{ env.HOME }}', 1],
    ];
    for (const [input, line] of cases) {
      it(`refuses ${JSON.stringify(input)} naming the file and line ${line}`, () => {
        const error = thrown(() => renderTemplate(input, options()));
        expect(error.code).to.equal('RENDER_FAILED');
        expect(error.exitCode).to.equal(2);
        expect(error.problems).to.have.length(1);
        expect(error.problems[0]).to.include({ file: FILE, line });
        expect(error.problems[0]?.message).to.contain('unsupported placeholder');
        expect(error.message).to.contain(FILE);
      });
    }
  });

  describe('renderTemplate: undeclared and missing variables', () => {
    it('an undeclared variable names the file, line and variable, and what is allowed', () => {
      const error = thrown(() =>
        renderTemplate('a: 1\nb: {{ host.colour }}\n', options({ allowed: ['port', 'fqdn'] })),
      );
      expect(error.code).to.equal('RENDER_FAILED');
      expect(error.problems).to.deep.equal([
        {
          file: FILE,
          line: 2,
          message: 'host variable colour is not declared by this domain (allowed: fqdn, port)',
        },
      ]);
    });

    it('says "none" when the domain allows no variables', () => {
      const error = thrown(() => renderTemplate('{{ host.port }}', options({ allowed: [] })));
      expect(error.problems[0]?.message).to.contain('(allowed: none)');
    });

    it('a declared but missing variable names the file, line, variable and host file', () => {
      const error = thrown(() => renderTemplate('x\ny\nz: {{ host.absent }}', options()));
      expect(error.problems).to.deep.equal([
        { file: FILE, line: 3, message: `host variable absent is not set in ${HOST_FILE}` },
      ]);
      expect(error.message).to.contain(FILE).and.contain(HOST_FILE).and.contain('absent');
    });

    it('the two messages differ, so the operator knows where to fix it', () => {
      const undeclared = thrown(() => renderTemplate('{{ host.other }}', options()));
      const missing = thrown(() => renderTemplate('{{ host.absent }}', options()));
      expect(undeclared.problems[0]?.message).to.contain('not declared');
      expect(missing.problems[0]?.message).to.contain('not set in');
    });

    it('inherited object properties are not variables', () => {
      const error = thrown(() =>
        renderTemplate('{{ host.toString }}', options({ allowed: ['toString'], variables: {} })),
      );
      expect(error.problems[0]?.message).to.contain('toString is not set');
    });

    it('reports every problem, sorted by line, and counts the rest in the message', () => {
      const text = [
        'ok: {{ host.port }}', // 1
        'missing: {{ host.absent }}', // 2
        'bad: {{ foo }}', // 3
        'undeclared: {{ host.colour }}', // 4
        'bad again: {{ bar.baz }}', // 5
      ].join('\n');
      const error = thrown(() => renderTemplate(text, options()));
      expect(error.problems.map((p) => p.line)).to.deep.equal([2, 3, 4, 5]);
      expect(error.message).to.contain('host variable absent').and.contain('(and 3 more)');
    });
  });

  describe('renderTemplate: bytes outside placeholders are preserved exactly', () => {
    const cases: [title: string, input: string, expected: string][] = [
      ['CRLF line endings', 'a: {{ host.port }}\r\nb: 2\r\n', 'a: 7701\r\nb: 2\r\n'],
      ['no final newline', 'a: {{ host.port }}\nb: 2', 'a: 7701\nb: 2'],
      ['a BOM and unicode', '\ufeffname: {{ host.node_id }} — é\n', '\ufeffname: node-01 — é\n'],
      ['trailing whitespace', 'a: {{ host.port }}  \t\n\n\n', 'a: 7701  \t\n\n\n'],
    ];
    for (const [title, input, expected] of cases) {
      it(title, () => {
        expect(renderTemplate(input, options())).to.equal(expected);
      });
    }

    it('values with $ replacement patterns are inserted literally', () => {
      const variables = { node_id: "$&$1$'" };
      expect(renderTemplate('{{ host.node_id }}', options({ variables }))).to.equal("$&$1$'");
    });

    it('line numbers count LF in CRLF content', () => {
      const error = thrown(() => renderTemplate('a\r\nb\r\n{{ foo }}\r\n', options()));
      expect(error.problems[0]?.line).to.equal(3);
    });
  });

  // A literal `{{` is written as Go templates (chezmoi's text/template) and Jinja (Ansible's
  // template module) write it: {{ "{{" }}, a string literal of the braces; {{ "}}" }} likewise.
  describe('renderTemplate: {{ "{{" }} is a literal {{, as in Go templates and Jinja', () => {
    const cases: [title: string, input: string, expected: string][] = [
      [
        'a tmux/mustache line',
        'set -g status-left "{{ "{{" }} session }}"\n',
        'set -g status-left "{{ session }}"\n',
      ],
      ['without blanks', '{{"{{"}} name }}', '{{ name }}'],
      ['beside a host variable', '{{ "{{" }} x }} = {{ host.port }}\n', '{{ x }} = 7701\n'],
      ['a literal host placeholder', '{{ "{{" }} host.port }}', '{{ host.port }}'],
      ['as Go and Jinja users close it', '{{ "{{" }} x {{ "}}" }}', '{{ x }}'],
      ['twice on a line', '{{ "{{" }}a}} {{ "{{" }}b}}', '{{a}} {{b}}'],
      ['braces that were never special stay', '{{#each}} {{ .Values }}', '{{#each}} {{ .Values }}'],
    ];
    for (const [title, input, expected] of cases) {
      it(title, () => {
        expect(renderTemplate(input, options())).to.equal(expected);
      });
    }

    it('a host value that holds the escape is inserted as it is', () => {
      const variables = { node_id: '{{ "{{" }}' };
      expect(renderTemplate('{{ host.node_id }}', options({ variables }))).to.equal('{{ "{{" }}');
    });

    it('refuses an escape that would write {{ secret.NAME }} as text (the node resolves those), with its line', () => {
      const error = thrown(() =>
        renderTemplate('a\ntoken = {{ "{{" }} secret.API_TOKEN }}\n', options()),
      );
      expect(error.code).to.equal('RENDER_FAILED');
      expect(error.problems[0]).to.include({ file: FILE, line: 2 });
      expect(error.problems[0]?.message).to.contain('template: false');
    });

    it('the braces without the escape are still refused, so a typo never ships as text', () => {
      expect(thrown(() => renderTemplate('{{ session }}', options())).code).to.equal(
        'RENDER_FAILED',
      );
    });
  });

  describe('adopt: captured braces are escaped, so the source renders back to the live text', () => {
    // Live text as a host holds it; `{{ secret.TOKEN }}` is the node's redaction of a value.
    const cases: { name: string; live: string; source: string }[] = [
      {
        name: 'a tmux status line keeps its {{ session }}',
        live: 'set -g status-left "{{ session }}"\n',
        source: 'set -g status-left "{{ "{{" }} session }}"\n',
      },
      {
        name: 'a mustache section and a Go template action',
        live: '{{#each items}}{{ .Values.name }}{{/each}}\n',
        source: '{{ "{{" }}#each items}}{{ "{{" }} .Values.name }}{{ "{{" }}/each}}\n',
      },
      {
        name: 'a literal {{ host.NAME }} is text, not a variable of this host',
        live: 'doc: write {{ host.name }}\n',
        source: 'doc: write {{ "{{" }} host.name }}\n',
      },
      {
        name: 'a redacted secret stays its placeholder',
        live: 'token={{ secret.TOKEN }} tpl={{x}}\n',
        source: 'token={{ secret.TOKEN }} tpl={{ "{{" }}x}}\n',
      },
      {
        name: 'the escape itself, written literally, survives',
        live: 'go: {{ "{{" }}\n',
        source: 'go: {{ "{{" }} "{{ "{{" }}" }}\n',
      },
      { name: 'three braces', live: '{{{ x }}}', source: '{{ "{{" }}{ x }}}' },
      { name: 'no braces: unchanged', live: 'plain = 1\n', source: 'plain = 1\n' },
    ];
    for (const { name, live, source } of cases) {
      it(name, () => {
        expect(escapeLiteralBraces(live)).to.equal(source);
        // Rendered for a host, secrets left for the node: the live text again.
        expect(renderTemplate(source, options({ allowed: [] }))).to.equal(live);
      });
    }

    it('a template entry: braces escaped, then host values become placeholders', () => {
      const captured = sourceOfCapture({}, 'id: node-01 "{{ session }}"\n', { node_id: 'node-01' });
      expect(captured.content).to.equal('id: {{ host.node_id }} "{{ "{{" }} session }}"\n');
      expect(renderTemplate(captured.content, options())).to.equal('id: node-01 "{{ session }}"\n');
    });

    it('an entry with template: false is copied as it is: no escape, no placeholder', () => {
      const live = 'id: node-01 "{{ session }}"\n';
      expect(sourceOfCapture({ template: false }, live, { node_id: 'node-01' })).to.deep.equal({
        content: live,
        substitutions: {},
      });
    });
  });

  describe('scanPlaceholders and secretNames', () => {
    it('finds placeholders with namespace, name, line and offsets', () => {
      const text = 'a\n  {{ host.x }} {{secret.Y}}';
      const { placeholders, problems } = scanPlaceholders(text, 'f');
      expect(problems).to.deep.equal([]);
      expect(placeholders.map((p) => [p.namespace, p.name, p.line])).to.deep.equal([
        ['host', 'x', 2],
        ['secret', 'Y', 2],
      ]);
      for (const p of placeholders) expect(text.slice(p.start, p.end)).to.match(/^\{\{.*\}\}$/);
    });

    it('secretNames lists each secret once, in order of first use', () => {
      const text = '{{ secret.B }} {{ host.x }} {{ secret.A }} {{ secret.B }}';
      expect(secretNames(text)).to.deep.equal(['B', 'A']);
    });
  });

  describe('reverseSubstitute', () => {
    it('replaces the longest value first (node-01.lan before node-01)', () => {
      const result = reverseSubstitute('host node-01.lan is node-01', {
        name: 'node-01',
        fqdn: 'node-01.lan',
      });
      expect(result.content).to.equal('host {{ host.fqdn }} is {{ host.name }}');
      expect(result.substitutions).to.deep.equal({ fqdn: 1, name: 1 });
    });

    it('gives the same result whatever order the variables come in', () => {
      const text = 'node-01.lan node-01 node-01.lan.example';
      const a = reverseSubstitute(text, {
        a: 'node-01',
        b: 'node-01.lan',
        c: 'node-01.lan.example',
      });
      const b = reverseSubstitute(text, {
        c: 'node-01.lan.example',
        b: 'node-01.lan',
        a: 'node-01',
      });
      expect(a).to.deep.equal(b);
      expect(a.content).to.equal('{{ host.b }} {{ host.a }} {{ host.c }}');
    });

    it('leaves existing placeholders untouched, even when a value occurs inside them', () => {
      const result = reverseSubstitute('{{ host.node }} node {{ secret.node }}', { v: 'node' });
      expect(result.content).to.equal('{{ host.node }} {{ host.v }} {{ secret.node }}');
      expect(result.substitutions).to.deep.equal({ v: 1 });
    });

    it('skips empty values (they would match everywhere)', () => {
      const result = reverseSubstitute('abc', { empty: '', b: 'b' });
      expect(result.content).to.equal('a{{ host.b }}c');
      expect(result.substitutions).to.deep.equal({ b: 1 });
    });

    it('returns the text unchanged when there is nothing to substitute', () => {
      expect(reverseSubstitute('abc', {})).to.deep.equal({ content: 'abc', substitutions: {} });
      expect(reverseSubstitute('abc', { e: '' })).to.deep.equal({
        content: 'abc',
        substitutions: {},
      });
      expect(reverseSubstitute('abc', { x: 'zzz' })).to.deep.equal({
        content: 'abc',
        substitutions: {},
      });
    });

    it('counts every occurrence', () => {
      const result = reverseSubstitute('7701 7701\n7701', { port: '7701', id: 'x' });
      expect(result.substitutions).to.deep.equal({ port: 3 });
    });

    it('treats regex metacharacters in values literally', () => {
      const result = reverseSubstitute('a.b axb (x|y) $1', { dot: 'a.b', alt: '(x|y)', d: '$1' });
      expect(result.content).to.equal('{{ host.dot }} axb {{ host.alt }} {{ host.d }}');
    });

    it('render then reverse gives the canonical template back (round trip)', () => {
      const canonical =
        'node: {{ host.node_id }}\r\nfqdn: {{ host.fqdn }}\r\nkey: {{ secret.API_KEY }}\r\nport: {{ host.port }}';
      const rendered = renderTemplate(canonical, options());
      expect(rendered).to.not.contain('{{ host.');
      const back = reverseSubstitute(rendered, options().variables);
      expect(back.content).to.equal(canonical);
      expect(back.substitutions).to.deep.equal({ node_id: 1, fqdn: 1, port: 1 });
    });
  });
});
