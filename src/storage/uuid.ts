// Whether `s` is a value a uuid column accepts: anything else matches no row, rather than being a query PostgreSQL
// refuses (22P02, which would surface as a 500).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (s: string) => UUID.test(s)
