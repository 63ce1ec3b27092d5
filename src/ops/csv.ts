// RFC 4180 CSV: every field quoted when it holds a comma, quote, CR or LF; lines end with CRLF. A cell a spreadsheet
// would run as a formula (starting with =, +, -, @, tab or CR) is prefixed with ' so it stays text.
const FORMULA = /^[=+\-@\t\r]/

export function csvCell(value: string | null | undefined): string {
  let s = value ?? ''
  if (FORMULA.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export const csvLine = (cells: (string | null | undefined)[]) => `${cells.map(csvCell).join(',')}\r\n`
