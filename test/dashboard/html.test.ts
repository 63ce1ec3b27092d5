import t from 'tap'
import { csvCell, csvLine } from '../../src/ops/csv.js'
import { escapeHtml, html, raw } from '../../src/dashboard/html.js'

t.test('html escapes every interpolation; raw() alone passes markup through', async (t) => {
  const hostile = `"><img src=x onerror=alert(1)><script>alert('x')</script>&`
  const out = html`<p title="${hostile}">${hostile}</p>`.text
  t.notMatch(out, '<img')
  t.notMatch(out, '<script')
  t.equal(out, `<p title="${escapeHtml(hostile)}">${escapeHtml(hostile)}</p>`)
  t.equal(escapeHtml(`<>&"'`), '&lt;&gt;&amp;&quot;&#39;')
  t.equal(html`${['<a>', html`<b>`, null, undefined, false, 0]}`.text, '&lt;a&gt;<b>0')
  t.equal(html`${raw('<hr>')}`.text, '<hr>')
})

t.test('CSV cells: RFC 4180 quoting, formula prefixes', async (t) => {
  t.equal(csvCell('plain'), 'plain')
  t.equal(csvCell(null), '')
  t.equal(csvCell('a,b'), '"a,b"')
  t.equal(csvCell('say "hi"'), '"say ""hi"""')
  t.equal(csvCell('two\nlines'), '"two\nlines"')
  for (const start of ['=', '+', '-', '@', '\t']) t.equal(csvCell(`${start}SUM(A1)`), `'${start}SUM(A1)`)
  t.equal(csvCell('\rx'), `"'\rx"`)
  t.equal(csvCell('=1,2'), `"'=1,2"`)
  t.equal(csvLine(['a', 'b,c', null]), 'a,"b,c",\r\n')
})
