export interface paths {
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The authenticated user and the plan of their account */
        get: operations["getMe"];
        put?: never;
        post?: never;
        delete?: never;
        /** The methods this path allows (no key needed) */
        options: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content; `Allow` lists the methods */
                204: {
                    headers: {
                        /** @description The methods of this path. */
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                400: components["responses"]["BadRequest"];
                404: components["responses"]["NotFound"];
                405: components["responses"]["MethodNotAllowed"];
                408: components["responses"]["RequestTimeout"];
                413: components["responses"]["PayloadTooLarge"];
                431: components["responses"]["HeaderTooLarge"];
                500: components["responses"]["InternalError"];
            };
        };
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ai/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a non-streaming language-model completion */
        post: operations["createCompletion"];
        delete?: never;
        /** The methods this path allows (no key needed) */
        options: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content; `Allow` lists the methods */
                204: {
                    headers: {
                        /** @description The methods of this path. */
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                400: components["responses"]["BadRequest"];
                404: components["responses"]["NotFound"];
                405: components["responses"]["MethodNotAllowed"];
                408: components["responses"]["RequestTimeout"];
                413: components["responses"]["PayloadTooLarge"];
                431: components["responses"]["HeaderTooLarge"];
                500: components["responses"]["InternalError"];
            };
        };
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/leads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a lead */
        post: operations["createLead"];
        delete?: never;
        /** The methods this path allows (no key needed) */
        options: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content; `Allow` lists the methods */
                204: {
                    headers: {
                        /** @description The methods of this path. */
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                400: components["responses"]["BadRequest"];
                404: components["responses"]["NotFound"];
                405: components["responses"]["MethodNotAllowed"];
                408: components["responses"]["RequestTimeout"];
                413: components["responses"]["PayloadTooLarge"];
                431: components["responses"]["HeaderTooLarge"];
                500: components["responses"]["InternalError"];
            };
        };
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        /** The methods this path allows (no key needed) */
        options: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description No content; `Allow` lists the methods */
                204: {
                    headers: {
                        /** @description The methods of this path. */
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                400: components["responses"]["BadRequest"];
                404: components["responses"]["NotFound"];
                405: components["responses"]["MethodNotAllowed"];
                408: components["responses"]["RequestTimeout"];
                413: components["responses"]["PayloadTooLarge"];
                431: components["responses"]["HeaderTooLarge"];
                500: components["responses"]["InternalError"];
            };
        };
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** Caller */
        Caller: {
            /** @description The user the key belongs to; null for a key issued to the account alone. */
            user: {
                /** Format: uuid */
                id: string;
                /** Format: email */
                email: string;
                name: string | null;
                /**
                 * @description owner, admin or member.
                 * @enum {string}
                 */
                role: "owner" | "admin" | "member";
            } | null;
            /** @enum {string} */
            plan: "FREE" | "STARTER" | "PRO" | "ENTERPRISE";
            /** @description Monthly AI quota of the account; one unit is one completion the upstream answered. */
            quota: {
                /** @description Completions per calendar month (UTC); null when unlimited. */
                limit: number | null;
                used: number;
                /** @description null when unlimited. */
                remaining: number | null;
                /**
                 * Format: date-time
                 * @description Start of the next calendar month, UTC.
                 */
                resets_at: string;
            };
        };
        /** CompletionResponse */
        CompletionResponse: {
            /** @description The upstream model that answered. */
            model: string;
            /** @description The generated text. */
            content: string;
            stop_reason: string | null;
            usage: {
                input_tokens: number;
                output_tokens: number;
                cache_read_input_tokens: number;
                cache_creation_input_tokens: number;
            };
        };
        /** CompletionRequest */
        CompletionRequest: {
            messages: {
                /** @enum {string} */
                role: "user" | "assistant";
                content: string;
            }[];
            /**
             * @description Model alias.
             * @default primary
             * @enum {string}
             */
            model?: "primary" | "fast";
            system?: string;
            /** @default 1024 */
            max_tokens?: number;
            /** @description Sent upstream only when given; otherwise the model default applies. */
            temperature?: number;
        };
        /** LeadCreated */
        LeadCreated: {
            /**
             * Format: uuid
             * @description Identifier of the new lead.
             */
            id: string;
            /** Format: date-time */
            createdAt: string;
        };
        /** LeadInput */
        LeadInput: {
            /** @description Name of the person asking. */
            name: string;
            /**
             * Format: email
             * @description Where to answer.
             */
            email: string;
            /** @description The service the lead is interested in. */
            service: string;
            /** @description What the lead wrote. */
            message: string;
            phone?: string;
            company?: string;
            budget?: string;
            locale?: string;
            source?: string;
            utm?: {
                source?: string;
                medium?: string;
                campaign?: string;
            };
        };
        /** OpenApiDocument */
        OpenApiDocument: {
            openapi: string;
            info: {
                title: string;
                version: string;
            };
        };
    };
    responses: {
        /** @description Bad request: bad_request */
        BadRequest: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "bad_request";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Not found: not_found */
        NotFound: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "not_found";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Method not allowed: method_not_allowed */
        MethodNotAllowed: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "method_not_allowed";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Request timeout: request_timeout */
        RequestTimeout: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "request_timeout";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Request too large: payload_too_large */
        PayloadTooLarge: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "payload_too_large";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Request headers too large: header_too_large */
        HeaderTooLarge: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "header_too_large";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        /** @description Internal error: internal_error */
        InternalError: {
            headers: {
                /** @description Identifier of this request in the server logs. */
                "x-request-id"?: string;
                /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                RateLimit?: string;
                /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: {
                        /** @enum {string} */
                        code: "internal_error";
                        message?: string;
                        /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                        details?: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller */
            200: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Caller"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Missing or invalid API key: unauthorized */
            401: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unauthorized";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description Too many requests: rate_limited */
            429: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "rate_limited";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            /** @description Service unavailable: service_unavailable */
            503: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "service_unavailable";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
        };
    };
    createCompletion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompletionRequest"];
            };
        };
        responses: {
            /** @description The completion */
            200: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    /** @description Standard Server-Timing: `upstream;dur=<ms>, total;dur=<ms>`; the difference is what the gateway added. */
                    "Server-Timing"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompletionResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Missing or invalid API key: unauthorized */
            401: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unauthorized";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description Unsupported media type: unsupported_media_type */
            415: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unsupported_media_type";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Invalid input: invalid_request, invalid_json */
            422: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "invalid_request" | "invalid_json";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Too many requests: rate_limited, quota_exceeded */
            429: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "rate_limited" | "quota_exceeded";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            /** @description Bad upstream answer: upstream_error */
            502: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "upstream_error";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Service unavailable: service_unavailable, ai_not_configured, upstream_unavailable */
            503: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "service_unavailable" | "ai_not_configured" | "upstream_unavailable";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Upstream timeout: upstream_timeout */
            504: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "upstream_timeout";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
        };
    };
    createLead: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: a request with the key and body of one made in the last 24 hours (by any key of the same account) answers the lead that one created instead of creating another; the same key with another body is refused (422 idempotency_key_reused). 1 to 255 printable ASCII characters, e.g. a UUID. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LeadInput"];
            };
        };
        responses: {
            /** @description The lead is stored (or, for a retried Idempotency-Key, was stored by the first request) */
            201: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    /** @description Present, `true`, when this answer repeats the one given to an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeadCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Missing or invalid API key: unauthorized */
            401: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unauthorized";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description Unsupported media type: unsupported_media_type */
            415: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unsupported_media_type";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Invalid input: idempotency_key_reused, invalid_json, invalid_request */
            422: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "idempotency_key_reused" | "invalid_json" | "invalid_request";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            /** @description Too many requests: rate_limited */
            429: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "rate_limited";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            /** @description Service unavailable: service_unavailable */
            503: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "service_unavailable";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
        };
    };
    getOpenApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 description of this API */
            200: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenApiDocument"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Missing or invalid API key: unauthorized */
            401: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "unauthorized";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description Too many requests: rate_limited */
            429: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "rate_limited";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            /** @description Service unavailable: service_unavailable */
            503: {
                headers: {
                    /** @description Identifier of this request in the server logs. */
                    "x-request-id"?: string;
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    /** @description IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`. */
                    RateLimit?: string;
                    /** @description IETF draft rate-limit policy: `"default";q=<limit>;w=60`. */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @enum {string} */
                            code: "service_unavailable";
                            message?: string;
                            /** @description Free-form. For invalid_request: `issues`, a list of `{path, message}`. */
                            details?: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
        };
    };
}
