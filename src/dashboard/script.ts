// Progressive enhancement only (every action works without it): copy buttons and the confirm step of forms
// marked data-confirm. Served at /dashboard/assets/app.js, so the CSP needs no inline script.
export const SCRIPT = `
document.addEventListener('click', function (e) {
  var b = e.target.closest('[data-copy]')
  if (!b) return
  var el = document.getElementById(b.getAttribute('data-copy'))
  if (!el || !navigator.clipboard) return
  navigator.clipboard.writeText(el.textContent).then(function () { b.textContent = 'Copied' })
})
document.querySelectorAll('[data-copy]').forEach(function (b) { b.hidden = false })
`
