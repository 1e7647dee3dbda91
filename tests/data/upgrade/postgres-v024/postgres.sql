--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: kaeru_prune_text_changes(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_prune_text_changes(keep bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    cut XID8;
BEGIN
    INSERT INTO text_change_horizon (horizon) VALUES ('0'::xid8) ON CONFLICT DO NOTHING;  -- (emptied)
    PERFORM 1 FROM text_change_horizon FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT xid INTO cut FROM text_changes ORDER BY xid DESC OFFSET keep LIMIT 1;
    IF cut IS NULL THEN
        RETURN;
    END IF;
    DELETE FROM text_changes WHERE xid < cut;
    UPDATE text_change_horizon SET horizon = cut WHERE horizon < cut;
END
$$;


--
-- Name: kaeru_section_counts(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_section_counts() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_setting('kaeru.bulk_index', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO section_counts AS c (initiative_id, facet, shard, members)
    SELECT k.i, k.f, pg_backend_pid() % 64, sum(k.d)
    FROM (
        SELECT NEW.initiative_id AS i, NEW.facet AS f, 1 AS d WHERE TG_OP <> 'DELETE' AND NEW.facet <> ''
        UNION ALL SELECT OLD.initiative_id, OLD.facet, -1 WHERE TG_OP <> 'INSERT' AND OLD.facet <> ''
    ) k
    GROUP BY k.i, k.f
    HAVING sum(k.d) <> 0
    ORDER BY k.i, k.f
    ON CONFLICT (initiative_id, facet, shard) DO UPDATE SET members = c.members + excluded.members;
    RETURN NULL;
END
$$;


--
-- Name: kaeru_term_fields(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_term_fields(counts jsonb) RETURNS smallint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT (((counts ->> 0)::int > 0)::int | (((counts ->> 1)::int > 0)::int << 1)
            | (((counts ->> 2)::int > 0)::int << 2) | (((counts ->> 3)::int > 0)::int << 3))::smallint
$$;


--
-- Name: kaeru_term_stats(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_term_stats() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    my_shard SMALLINT := pg_backend_pid() % 64;
    old_l  JSONB;
    old_s  JSONB;
    old_dl INTEGER;
    new_l  JSONB;
    new_s  JSONB;
    new_dl INTEGER;
BEGIN
    IF current_setting('kaeru.bulk_index', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        old_l := OLD.ltf; old_s := OLD.stf; old_dl := OLD.dl;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_l := NEW.ltf; new_s := NEW.stf; new_dl := NEW.dl;
    END IF;
    IF old_l IS DISTINCT FROM new_l OR old_s IS DISTINCT FROM new_s THEN
        INSERT INTO term_stats AS t (term, fields, shard, literal, stemmed)
        SELECT c.term, c.fields, my_shard, sum(c.l), sum(c.s)
        FROM (
            SELECT key AS term, kaeru_term_fields(value) AS fields, 1 AS l, 0 AS s FROM jsonb_each(new_l)
            UNION ALL SELECT key, kaeru_term_fields(value), 0, 1 FROM jsonb_each(new_s)
            UNION ALL SELECT key, kaeru_term_fields(value), -1, 0 FROM jsonb_each(old_l)
            UNION ALL SELECT key, kaeru_term_fields(value), 0, -1 FROM jsonb_each(old_s)
        ) c
        GROUP BY c.term, c.fields
        HAVING sum(c.l) <> 0 OR sum(c.s) <> 0
        ORDER BY c.term COLLATE "C", c.fields
        ON CONFLICT (term, fields, shard) DO UPDATE
            SET literal = t.literal + excluded.literal, stemmed = t.stemmed + excluded.stemmed;
    END IF;
    IF old_dl IS DISTINCT FROM new_dl THEN
        INSERT INTO text_totals AS t (shard, docs, tokens)
        VALUES (my_shard, (new_dl IS NOT NULL)::int - (old_dl IS NOT NULL)::int, coalesce(new_dl, 0) - coalesce(old_dl, 0))
        ON CONFLICT (shard) DO UPDATE SET docs = t.docs + excluded.docs, tokens = t.tokens + excluded.tokens;
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: kaeru_text_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_text_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO text_changes (node_seq) VALUES (NEW.seq);
    RETURN NULL;
END
$$;


--
-- Name: kaeru_vector_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.kaeru_vector_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO text_changes (node_seq, kind) SELECT seq, 'vector' FROM nodes WHERE id = NEW.node_id;
    RETURN NULL;
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit (
    seq bigint NOT NULL,
    at text NOT NULL COLLATE pg_catalog."C",
    operation text NOT NULL COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C",
    request_id text COLLATE pg_catalog."C",
    initiative_id bigint,
    affected text NOT NULL COLLATE pg_catalog."C",
    changes text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: audit_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.audit_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: cursors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.cursors (
    id text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    items text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: edge_revisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.edge_revisions (
    src text NOT NULL COLLATE pg_catalog."C",
    dst text NOT NULL COLLATE pg_catalog."C",
    edge_type text NOT NULL COLLATE pg_catalog."C",
    rev_no integer NOT NULL,
    weight double precision NOT NULL,
    properties text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    recorded_at text NOT NULL COLLATE pg_catalog."C",
    retracted boolean NOT NULL,
    actor text COLLATE pg_catalog."C",
    request_id text COLLATE pg_catalog."C"
);


--
-- Name: edges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.edges (
    src text NOT NULL COLLATE pg_catalog."C",
    dst text NOT NULL COLLATE pg_catalog."C",
    edge_type text NOT NULL COLLATE pg_catalog."C",
    weight double precision NOT NULL,
    rev_no integer NOT NULL,
    properties text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    recorded_at text NOT NULL COLLATE pg_catalog."C",
    retracted boolean DEFAULT false NOT NULL
);


--
-- Name: initiative_ends; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.initiative_ends (
    initiative_id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    created_at text COLLATE pg_catalog."C",
    ended_at text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: initiative_names; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.initiative_names (
    initiative_id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    valid_from text NOT NULL COLLATE pg_catalog."C",
    valid_to text COLLATE pg_catalog."C"
);


--
-- Name: initiatives; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.initiatives (
    id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    last_activity text NOT NULL COLLATE pg_catalog."C",
    properties text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: initiatives_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.initiatives ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.initiatives_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memberships; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memberships (
    initiative_id bigint NOT NULL,
    node_seq bigint NOT NULL,
    facet text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.meta (
    key text NOT NULL COLLATE pg_catalog."C",
    value text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: node_vectors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.node_vectors (
    node_id text NOT NULL COLLATE pg_catalog."C",
    model text NOT NULL COLLATE pg_catalog."C",
    text_sha text NOT NULL COLLATE pg_catalog."C",
    embedding real[] NOT NULL
);


--
-- Name: nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nodes (
    seq bigint NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    rev_no integer NOT NULL,
    revision text NOT NULL COLLATE pg_catalog."C",
    node_type text NOT NULL COLLATE pg_catalog."C",
    tier text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    body text COLLATE pg_catalog."C",
    description text COLLATE pg_catalog."C",
    tags text[] NOT NULL COLLATE pg_catalog."C",
    layer text NOT NULL COLLATE pg_catalog."C",
    visibility text NOT NULL COLLATE pg_catalog."C",
    status text COLLATE pg_catalog."C",
    properties text NOT NULL COLLATE pg_catalog."C",
    initiatives bigint[] NOT NULL,
    created_at text NOT NULL COLLATE pg_catalog."C",
    recorded_at text NOT NULL COLLATE pg_catalog."C",
    retracted boolean DEFAULT false NOT NULL,
    pinned boolean DEFAULT false NOT NULL,
    tsv tsvector,
    stv tsvector,
    ltf jsonb,
    stf jsonb,
    dl integer,
    request_id text COLLATE pg_catalog."C",
    actor text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: nodes_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.nodes ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.nodes_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: past_revisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.past_revisions (
    node_seq bigint NOT NULL,
    rev_no integer NOT NULL,
    revision text NOT NULL COLLATE pg_catalog."C",
    node_type text NOT NULL COLLATE pg_catalog."C",
    tier text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    body text COLLATE pg_catalog."C",
    description text COLLATE pg_catalog."C",
    tags text[] NOT NULL COLLATE pg_catalog."C",
    layer text NOT NULL COLLATE pg_catalog."C",
    visibility text NOT NULL COLLATE pg_catalog."C",
    status text COLLATE pg_catalog."C",
    properties text NOT NULL COLLATE pg_catalog."C",
    initiatives bigint[] NOT NULL,
    created_at text NOT NULL COLLATE pg_catalog."C",
    recorded_at text NOT NULL COLLATE pg_catalog."C",
    retracted boolean NOT NULL,
    pinned boolean NOT NULL,
    request_id text COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.requests (
    initiative text NOT NULL COLLATE pg_catalog."C",
    operation text NOT NULL COLLATE pg_catalog."C",
    request_id text NOT NULL COLLATE pg_catalog."C",
    args_hash bytea NOT NULL,
    response bytea,
    created_at text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at text DEFAULT to_char((clock_timestamp() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'::text) NOT NULL
);


--
-- Name: section_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.section_counts (
    initiative_id bigint NOT NULL,
    facet text NOT NULL COLLATE pg_catalog."C",
    shard smallint NOT NULL,
    members bigint NOT NULL
);


--
-- Name: slot_revisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.slot_revisions (
    initiative_id bigint NOT NULL,
    slot text NOT NULL COLLATE pg_catalog."C",
    rev_no integer NOT NULL,
    node_id text COLLATE pg_catalog."C",
    revision text NOT NULL COLLATE pg_catalog."C",
    updated_at text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: slots; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.slots (
    initiative_id bigint NOT NULL,
    slot text NOT NULL COLLATE pg_catalog."C",
    node_id text COLLATE pg_catalog."C",
    rev_no integer NOT NULL,
    revision text NOT NULL COLLATE pg_catalog."C",
    updated_at text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: term_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.term_stats (
    term text NOT NULL COLLATE pg_catalog."C",
    fields smallint NOT NULL,
    shard smallint NOT NULL,
    literal bigint NOT NULL,
    stemmed bigint NOT NULL
);


--
-- Name: term_docs; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.term_docs AS
 SELECT false AS stemmed,
    term_stats.term,
    term_stats.fields,
    term_stats.shard,
    term_stats.literal AS docs
   FROM public.term_stats
  WHERE (term_stats.literal <> 0)
UNION ALL
 SELECT true AS stemmed,
    term_stats.term,
    term_stats.fields,
    term_stats.shard,
    term_stats.stemmed AS docs
   FROM public.term_stats
  WHERE (term_stats.stemmed <> 0);


--
-- Name: text_change_horizon; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.text_change_horizon (
    one boolean DEFAULT true NOT NULL,
    horizon xid8 NOT NULL,
    CONSTRAINT text_change_horizon_one_check CHECK (one)
);


--
-- Name: text_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.text_changes (
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    node_seq bigint NOT NULL,
    kind text DEFAULT 'node'::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT text_changes_kind_check CHECK ((kind = ANY (ARRAY['node'::text, 'vector'::text])))
);


--
-- Name: text_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.text_totals (
    shard smallint NOT NULL,
    docs bigint NOT NULL,
    tokens bigint NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    name text NOT NULL COLLATE pg_catalog."C",
    digest text NOT NULL COLLATE pg_catalog."C",
    initiatives text,
    read_only boolean DEFAULT false NOT NULL,
    created_at text NOT NULL COLLATE pg_catalog."C",
    last_used text COLLATE pg_catalog."C",
    expires_at text COLLATE pg_catalog."C"
);


--
-- Data for Name: audit; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (1, '2026-05-01T09:00:00.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-2a80-706c-9af7-5abc7f35fb02"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (2, '2026-05-01T09:00:10.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-5190-7419-b585-65f269bc4209"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (3, '2026-05-01T09:00:20.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-78a0-7a15-b328-6a46bbe980fc"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (4, '2026-05-01T09:00:30.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-9fb0-774c-ab3d-7c4a5204110e"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (5, '2026-05-01T09:00:40.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-c6c0-7558-a6e1-083f0cce6cae"]', '[{"edge": ["019de2c4-c6c0-7558-a6e1-083f0cce6cae", "019de2c4-2a80-706c-9af7-5abc7f35fb02", "refers_to"], "weight": 0.5}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (6, '2026-05-01T09:00:50.000000Z', 'note', 'agent', NULL, 1, '["019de2c4-edd0-7846-b225-58ca7adbdcb1"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (7, '2026-05-01T09:01:10.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-2a80-706c-9af7-5abc7f35fb02", "019de2c4-5190-7419-b585-65f269bc4209"]', '[{"after": 0.9, "before": null, "field": "edge.causal"}, {"edge": ["019de2c4-2a80-706c-9af7-5abc7f35fb02", "019de2c4-5190-7419-b585-65f269bc4209", "causal"], "weight": 0.9}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (8, '2026-05-01T09:01:20.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-78a0-7a15-b328-6a46bbe980fc", "019de2c4-5190-7419-b585-65f269bc4209"]', '[{"after": 0.4, "before": null, "field": "edge.refers_to"}, {"edge": ["019de2c4-78a0-7a15-b328-6a46bbe980fc", "019de2c4-5190-7419-b585-65f269bc4209", "refers_to"], "weight": 0.4}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (9, '2026-05-01T09:01:30.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-edd0-7846-b225-58ca7adbdcb1", "019de2c4-78a0-7a15-b328-6a46bbe980fc"]', '[{"after": 0.6, "before": null, "field": "edge.part_of"}, {"edge": ["019de2c4-edd0-7846-b225-58ca7adbdcb1", "019de2c4-78a0-7a15-b328-6a46bbe980fc", "part_of"], "weight": 0.6}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (10, '2026-05-01T09:01:40.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-78a0-7a15-b328-6a46bbe980fc", "019de2c4-5190-7419-b585-65f269bc4209"]', '[{"after": 0.7, "before": 0.4, "field": "edge.refers_to"}, {"edge": ["019de2c4-78a0-7a15-b328-6a46bbe980fc", "019de2c4-5190-7419-b585-65f269bc4209", "refers_to"], "weight": 0.7}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (11, '2026-05-01T09:01:50.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-9fb0-774c-ab3d-7c4a5204110e", "019de2c4-2a80-706c-9af7-5abc7f35fb02"]', '[{"after": 0.3, "before": null, "field": "edge.temporal"}, {"edge": ["019de2c4-9fb0-774c-ab3d-7c4a5204110e", "019de2c4-2a80-706c-9af7-5abc7f35fb02", "temporal"], "weight": 0.3}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (12, '2026-05-01T09:02:00.000000Z', 'link', 'agent', NULL, 1, '["019de2c4-9fb0-774c-ab3d-7c4a5204110e", "019de2c4-2a80-706c-9af7-5abc7f35fb02"]', '[{"after": null, "before": 0.3, "field": "edge.temporal"}, {"edge": ["019de2c4-9fb0-774c-ab3d-7c4a5204110e", "019de2c4-2a80-706c-9af7-5abc7f35fb02", "temporal"], "retracted": true}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (13, '2026-05-01T09:02:10.000000Z', 'revise', 'agent', NULL, 1, '["019de2c4-5190-7419-b585-65f269bc4209"]', '[{"after": "the tide turns at eight in summer and at seven in winter", "before": "the tide turns at eight in summer", "field": "body"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (14, '2026-05-01T09:02:30.000000Z', 'revise', 'agent', NULL, 1, '["019de2c4-5190-7419-b585-65f269bc4209"]', '[{"after": "tide table", "before": null, "field": "description"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (15, '2026-05-01T09:02:40.000000Z', 'revise', 'agent', NULL, 1, '["019de2c4-2a80-706c-9af7-5abc7f35fb02"]', '[{"after": "ferry-departure", "before": "ferry-time", "field": "name"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (16, '2026-05-01T09:03:00.000000Z', 'evolve', 'agent', NULL, 1, '["019de2c6-e9a0-73d3-b3ff-2de2065e5d3d", "019de2c4-c6c0-7558-a6e1-083f0cce6cae"]', '[{"edge": ["019de2c6-e9a0-73d3-b3ff-2de2065e5d3d", "019de2c4-c6c0-7558-a6e1-083f0cce6cae", "supersedes"], "weight": 1.0}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (17, '2026-05-01T09:03:10.000000Z', 'claim', 'agent', NULL, 1, '["019de2c7-10b0-70e3-bc1d-96438c566177", "019de2c7-10b0-70e5-8cb5-37bb115bd447"]', '[{"edge": ["019de2c7-10b0-70e3-bc1d-96438c566177", "019de2c4-9fb0-774c-ab3d-7c4a5204110e", "refers_to"], "weight": 0.8}, {"edge": ["019de2c7-10b0-70e5-8cb5-37bb115bd447", "019de2c7-10b0-70e3-bc1d-96438c566177", "targets"], "weight": 1.0}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (18, '2026-05-01T09:03:20.000000Z', 'verdict', 'agent', NULL, 1, '["019de2c7-10b0-70e5-8cb5-37bb115bd447", "019de2c7-10b0-70e3-bc1d-96438c566177"]', '[{"after": "refuted", "before": "open", "field": "status"}, {"edge": ["019de2c4-9fb0-774c-ab3d-7c4a5204110e", "019de2c7-10b0-70e3-bc1d-96438c566177", "falsifies"], "weight": 1.0}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (19, '2026-05-01T09:03:30.000000Z', 'slot', 'agent', NULL, 1, '[]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (20, '2026-05-01T09:03:40.000000Z', 'slot', 'agent', NULL, 1, '["019de2c4-2a80-706c-9af7-5abc7f35fb02"]', '[{"edge": ["019de2c4-5190-7419-b585-65f269bc4209", "019de2c4-2a80-706c-9af7-5abc7f35fb02", "supersedes"], "weight": 1.0}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (21, '2026-05-01T09:03:50.000000Z', 'task', 'agent', NULL, 1, '["019de2c7-acf0-70b5-ac64-3d9068432658"]', '[{"edge": ["019de2c7-acf0-70b5-ac64-3d9068432658", "019de2c6-e9a0-73d3-b3ff-2de2065e5d3d", "refers_to"], "weight": 0.5}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (22, '2026-05-01T09:04:00.000000Z', 'task_update', 'agent', NULL, 1, '["019de2c7-acf0-70b5-ac64-3d9068432658"]', '[{"after": "done", "before": "open", "field": "status"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (23, '2026-05-01T09:04:20.000000Z', 'note', 'agent', NULL, 2, '["019de2c8-2220-70aa-863a-7a7d5eef9bdb"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (24, '2026-05-01T09:04:40.000000Z', 'initiative', 'agent', NULL, 2, '[]', '[{"after": "harbour-ops", "before": "draft", "field": "initiative"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (25, '2026-05-01T09:04:50.000000Z', 'note', 'agent', NULL, 3, '["019de2c8-9750-71d3-9434-785ee1dfec5a"]', '[]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (26, '2026-05-01T09:05:00.000000Z', 'note', 'agent', NULL, 3, '["019de2c8-be60-723c-b0cc-921139503039"]', '[{"edge": ["019de2c8-be60-723c-b0cc-921139503039", "019de2c8-9750-71d3-9434-785ee1dfec5a", "derived_from"], "weight": 0.8}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (27, '2026-05-01T09:05:20.000000Z', 'initiative', 'agent', NULL, 3, '[]', '[{"after": 2, "before": 0, "field": "merged_nodes"}, {"after": "harbour", "before": "scratch", "field": "initiative"}]');
INSERT INTO public.audit (seq, at, operation, actor, request_id, initiative_id, affected, changes) VALUES (28, '2026-05-01T09:05:30.000000Z', 'forget', 'agent', NULL, 1, '["019de2c4-edd0-7846-b225-58ca7adbdcb1"]', '[{"after": "retracted", "before": "current", "field": "currentness"}, {"edge": ["019de2c4-edd0-7846-b225-58ca7adbdcb1", "019de2c4-78a0-7a15-b328-6a46bbe980fc", "part_of"], "retracted": true}, {"forget": "019de2c4-edd0-7846-b225-58ca7adbdcb1", "reason": "bought the rope"}]');


--
-- Data for Name: cursors; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: edge_revisions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-c6c0-7558-a6e1-083f0cce6cae', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'refers_to', 1, 0.5, '{}', '2026-05-01T09:00:40.000000Z', '2026-05-01T09:00:40.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-2a80-706c-9af7-5abc7f35fb02', '019de2c4-5190-7419-b585-65f269bc4209', 'causal', 1, 0.9, '{}', '2026-05-01T09:01:10.000000Z', '2026-05-01T09:01:10.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-78a0-7a15-b328-6a46bbe980fc', '019de2c4-5190-7419-b585-65f269bc4209', 'refers_to', 1, 0.4, '{}', '2026-05-01T09:01:20.000000Z', '2026-05-01T09:01:20.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-edd0-7846-b225-58ca7adbdcb1', '019de2c4-78a0-7a15-b328-6a46bbe980fc', 'part_of', 1, 0.6, '{}', '2026-05-01T09:01:30.000000Z', '2026-05-01T09:01:30.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-78a0-7a15-b328-6a46bbe980fc', '019de2c4-5190-7419-b585-65f269bc4209', 'refers_to', 2, 0.7, '{}', '2026-05-01T09:01:20.000000Z', '2026-05-01T09:01:40.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-9fb0-774c-ab3d-7c4a5204110e', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'temporal', 1, 0.3, '{}', '2026-05-01T09:01:50.000000Z', '2026-05-01T09:01:50.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-9fb0-774c-ab3d-7c4a5204110e', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'temporal', 2, 0.3, '{}', '2026-05-01T09:01:50.000000Z', '2026-05-01T09:02:00.000000Z', true, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c6-e9a0-73d3-b3ff-2de2065e5d3d', '019de2c4-c6c0-7558-a6e1-083f0cce6cae', 'supersedes', 1, 1, '{}', '2026-05-01T09:03:00.000000Z', '2026-05-01T09:03:00.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c7-10b0-70e3-bc1d-96438c566177', '019de2c4-9fb0-774c-ab3d-7c4a5204110e', 'refers_to', 1, 0.8, '{}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c7-10b0-70e5-8cb5-37bb115bd447', '019de2c7-10b0-70e3-bc1d-96438c566177', 'targets', 1, 1, '{}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-9fb0-774c-ab3d-7c4a5204110e', '019de2c7-10b0-70e3-bc1d-96438c566177', 'falsifies', 1, 1, '{}', '2026-05-01T09:03:20.000000Z', '2026-05-01T09:03:20.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-5190-7419-b585-65f269bc4209', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'supersedes', 1, 1, '{}', '2026-05-01T09:03:40.000000Z', '2026-05-01T09:03:40.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c7-acf0-70b5-ac64-3d9068432658', '019de2c6-e9a0-73d3-b3ff-2de2065e5d3d', 'refers_to', 1, 0.5, '{}', '2026-05-01T09:03:50.000000Z', '2026-05-01T09:03:50.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c8-be60-723c-b0cc-921139503039', '019de2c8-9750-71d3-9434-785ee1dfec5a', 'derived_from', 1, 0.8, '{}', '2026-05-01T09:05:00.000000Z', '2026-05-01T09:05:00.000000Z', false, 'agent', NULL);
INSERT INTO public.edge_revisions (src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted, actor, request_id) VALUES ('019de2c4-edd0-7846-b225-58ca7adbdcb1', '019de2c4-78a0-7a15-b328-6a46bbe980fc', 'part_of', 2, 0.6, '{}', '2026-05-01T09:01:30.000000Z', '2026-05-01T09:05:30.000000Z', true, 'agent', NULL);


--
-- Data for Name: edges; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-c6c0-7558-a6e1-083f0cce6cae', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'refers_to', 0.5, 1, '{}', '2026-05-01T09:00:40.000000Z', '2026-05-01T09:00:40.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-2a80-706c-9af7-5abc7f35fb02', '019de2c4-5190-7419-b585-65f269bc4209', 'causal', 0.9, 1, '{}', '2026-05-01T09:01:10.000000Z', '2026-05-01T09:01:10.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-78a0-7a15-b328-6a46bbe980fc', '019de2c4-5190-7419-b585-65f269bc4209', 'refers_to', 0.7, 2, '{}', '2026-05-01T09:01:20.000000Z', '2026-05-01T09:01:40.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-9fb0-774c-ab3d-7c4a5204110e', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'temporal', 0.3, 2, '{}', '2026-05-01T09:01:50.000000Z', '2026-05-01T09:02:00.000000Z', true);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c6-e9a0-73d3-b3ff-2de2065e5d3d', '019de2c4-c6c0-7558-a6e1-083f0cce6cae', 'supersedes', 1, 1, '{}', '2026-05-01T09:03:00.000000Z', '2026-05-01T09:03:00.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c7-10b0-70e3-bc1d-96438c566177', '019de2c4-9fb0-774c-ab3d-7c4a5204110e', 'refers_to', 0.8, 1, '{}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c7-10b0-70e5-8cb5-37bb115bd447', '019de2c7-10b0-70e3-bc1d-96438c566177', 'targets', 1, 1, '{}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-9fb0-774c-ab3d-7c4a5204110e', '019de2c7-10b0-70e3-bc1d-96438c566177', 'falsifies', 1, 1, '{}', '2026-05-01T09:03:20.000000Z', '2026-05-01T09:03:20.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-5190-7419-b585-65f269bc4209', '019de2c4-2a80-706c-9af7-5abc7f35fb02', 'supersedes', 1, 1, '{}', '2026-05-01T09:03:40.000000Z', '2026-05-01T09:03:40.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c7-acf0-70b5-ac64-3d9068432658', '019de2c6-e9a0-73d3-b3ff-2de2065e5d3d', 'refers_to', 0.5, 1, '{}', '2026-05-01T09:03:50.000000Z', '2026-05-01T09:03:50.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c8-be60-723c-b0cc-921139503039', '019de2c8-9750-71d3-9434-785ee1dfec5a', 'derived_from', 0.8, 1, '{}', '2026-05-01T09:05:00.000000Z', '2026-05-01T09:05:00.000000Z', false);
INSERT INTO public.edges (src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted) VALUES ('019de2c4-edd0-7846-b225-58ca7adbdcb1', '019de2c4-78a0-7a15-b328-6a46bbe980fc', 'part_of', 0.6, 2, '{}', '2026-05-01T09:01:30.000000Z', '2026-05-01T09:05:30.000000Z', true);


--
-- Data for Name: initiative_ends; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.initiative_ends (initiative_id, name, created_at, ended_at) VALUES (3, 'scratch', '2026-05-01T09:04:50.000000Z', '2026-05-01T09:05:20.000000Z');


--
-- Data for Name: initiative_names; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.initiative_names (initiative_id, name, valid_from, valid_to) VALUES (1, 'harbour', '2026-05-01T09:00:00.000000Z', NULL);
INSERT INTO public.initiative_names (initiative_id, name, valid_from, valid_to) VALUES (2, 'draft', '2026-05-01T09:04:20.000000Z', '2026-05-01T09:04:40.000000Z');
INSERT INTO public.initiative_names (initiative_id, name, valid_from, valid_to) VALUES (2, 'harbour-ops', '2026-05-01T09:04:40.000000Z', NULL);
INSERT INTO public.initiative_names (initiative_id, name, valid_from, valid_to) VALUES (3, 'scratch', '2026-05-01T09:04:50.000000Z', '2026-05-01T09:05:20.000000Z');


--
-- Data for Name: initiatives; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.initiatives (id, name, created_at, last_activity, properties) VALUES (2, 'harbour-ops', '2026-05-01T09:04:20.000000Z', '2026-05-01T09:04:40.000000Z', '{}');
INSERT INTO public.initiatives (id, name, created_at, last_activity, properties) VALUES (1, 'harbour', '2026-05-01T09:00:00.000000Z', '2026-05-01T09:05:30.000000Z', '{"merged_from": [{"at": "2026-05-01T09:05:20.000000Z", "name": "scratch"}]}');


--
-- Data for Name: memberships; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 2, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 3, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 4, 'archival:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 5, 'archival:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 7, 'archival:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 8, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 9, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 1, 'operational:cold');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 10, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (2, 11, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 12, 'operational:warm');
INSERT INTO public.memberships (initiative_id, node_seq, facet) VALUES (1, 13, 'operational:warm');


--
-- Data for Name: meta; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.meta (key, value) VALUES ('secret', '42b030ef35d42340aecdde4980e09d1fbfa8c4f253ee18edc59ca536a44dc4a5');


--
-- Data for Name: node_vectors; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: nodes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (3, '019de2c4-78a0-7a15-b328-6a46bbe980fc', 1, '1-20a78793e313', 'concept', 'operational', 'north-pier', 'never moor at the north pier in a storm', NULL, '{kind:rule,topic:north,topic:pier,topic:moor,topic:storm,lang:en}', 'warm', 'local', NULL, '{"constraint_state": "active"}', '{1}', '2026-05-01T09:00:20.000000Z', '2026-05-01T09:00:20.000000Z', false, false, '''a'':22 ''at'':17 ''en'':14C ''in'':21 ''kind'':3C ''lang'':13C ''moor'':10C,16 ''never'':15 ''north'':1A,6C,19 ''pier'':2A,8C,20 ''rule'':4C ''storm'':12C,23 ''the'':18 ''topic'':5C,7C,9C,11C', '''a'':18 ''at'':13 ''in'':17 ''moor'':8C,12 ''never'':11 ''north'':1A,4C,15 ''pier'':2A,6C,16 ''storm'':10C,19 ''the'':14 ''topic'':3C,5C,7C,9C', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "en": [0, 0, 0, 1], "in": [0, 0, 1, 0], "the": [0, 0, 1, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "moor": [0, 0, 1, 1], "pier": [1, 0, 1, 1], "rule": [0, 0, 0, 1], "never": [0, 0, 1, 0], "north": [1, 0, 1, 1], "storm": [0, 0, 1, 1], "topic": [0, 0, 0, 4]}', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "in": [0, 0, 1, 0], "the": [0, 0, 1, 0], "moor": [0, 0, 1, 1], "pier": [1, 0, 1, 1], "never": [0, 0, 1, 0], "north": [1, 0, 1, 1], "storm": [0, 0, 1, 1], "topic": [0, 0, 0, 4]}', 43, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (4, '019de2c4-9fb0-774c-ab3d-7c4a5204110e', 1, '1-aca5cc9858e0', 'reference', 'archival', 'crane-manual', 'Harbour handbook, page 12: the crane lifts ten tonnes.', 'the harbour handbook says the crane lifts ten tonnes', '{kind:reference,equipment,topic:crane,topic:manual,topic:harbour,topic:handbook,topic:page,lang:en}', 'warm', 'local', NULL, '{"source": {"chars": 54, "immutable": true, "sha256": "2f8b42feb71eed1de9c035a1e6cf52e1e2df7c8d21be5ad237c2619467df49eb"}}', '{1}', '2026-05-01T09:00:30.000000Z', '2026-05-01T09:00:30.000000Z', false, false, '''12'':30 ''crane'':1A,7C,23B,32 ''en'':17C ''equipment'':5C ''handbook'':13C,20B,28 ''harbour'':11C,19B,27 ''kind'':3C ''lang'':16C ''lifts'':24B,33 ''manual'':2A,9C ''page'':15C,29 ''reference'':4C ''says'':21B ''ten'':25B,34 ''the'':18B,22B,31 ''tonnes'':26B,35 ''topic'':6C,8C,10C,12C,14C', '''12'':26 ''crane'':1A,5C,19B,28 ''equip'':3C ''handbook'':11C,16B,24 ''harbour'':9C,15B,23 ''lift'':20B,29 ''manual'':2A,7C ''page'':13C,25 ''say'':17B ''ten'':21B,30 ''the'':14B,18B,27 ''tonn'':22B,31 ''topic'':4C,6C,8C,10C,12C', '{"12": [0, 0, 1, 0], "en": [0, 0, 0, 1], "ten": [0, 1, 1, 0], "the": [0, 2, 1, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "page": [0, 0, 1, 1], "says": [0, 1, 0, 0], "crane": [1, 1, 1, 1], "lifts": [0, 1, 1, 0], "topic": [0, 0, 0, 5], "manual": [1, 0, 0, 1], "tonnes": [0, 1, 1, 0], "harbour": [0, 1, 1, 1], "handbook": [0, 1, 1, 1], "equipment": [0, 0, 0, 1], "reference": [0, 0, 0, 1]}', '{"12": [0, 0, 1, 0], "say": [0, 1, 0, 0], "ten": [0, 1, 1, 0], "the": [0, 2, 1, 0], "lift": [0, 1, 1, 0], "page": [0, 0, 1, 1], "tonn": [0, 1, 1, 0], "crane": [1, 1, 1, 1], "equip": [0, 0, 0, 1], "topic": [0, 0, 0, 5], "manual": [1, 0, 0, 1], "harbour": [0, 1, 1, 1], "handbook": [0, 1, 1, 1]}', 67, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (1, '019de2c4-2a80-706c-9af7-5abc7f35fb02', 3, '3-7c910ca207ba', 'episode', 'operational', 'ferry-departure', 'the ferry leaves at nine because the tide turns at eight', NULL, '{kind:decision,boat,schedule,topic:ferry,topic:departure,topic:leaves,topic:nine,topic:tide,lang:en}', 'cold', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:00.000000Z', '2026-05-01T09:03:40.000000Z', false, false, '''at'':22 ''because'':24 ''boat'':5C ''decision'':4C ''departure'':2A,10C ''eight'':29 ''en'':18C ''ferry'':1A,8C,20 ''kind'':3C ''lang'':17C ''leaves'':12C,21 ''nine'':14C,23 ''schedule'':6C ''the'':19 ''tide'':16C,26 ''topic'':7C,9C,11C,13C,15C ''turns'':27', '''at'':18 ''becaus'':20 ''boat'':3C ''departur'':2A,8C ''eight'':25 ''ferri'':1A,6C,16 ''leav'':10C,17 ''nine'':12C,19 ''schedul'':4C ''the'':15 ''tide'':14C,22 ''topic'':5C,7C,9C,11C,13C ''turn'':23', '{"at": [0, 0, 2, 0], "en": [0, 0, 0, 1], "the": [0, 0, 2, 0], "boat": [0, 0, 0, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "nine": [0, 0, 1, 1], "tide": [0, 0, 1, 1], "eight": [0, 0, 1, 0], "ferry": [1, 0, 1, 1], "topic": [0, 0, 0, 5], "turns": [0, 0, 1, 0], "leaves": [0, 0, 1, 1], "because": [0, 0, 1, 0], "decision": [0, 0, 0, 1], "schedule": [0, 0, 0, 1], "departure": [1, 0, 0, 1]}', '{"at": [0, 0, 2, 0], "the": [0, 0, 2, 0], "boat": [0, 0, 0, 1], "leav": [0, 0, 1, 1], "nine": [0, 0, 1, 1], "tide": [0, 0, 1, 1], "turn": [0, 0, 1, 0], "eight": [0, 0, 1, 0], "ferri": [1, 0, 1, 1], "topic": [0, 0, 0, 5], "becaus": [0, 0, 1, 0], "schedul": [0, 0, 0, 1], "departur": [1, 0, 0, 1]}', 55, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (5, '019de2c4-c6c0-7558-a6e1-083f0cce6cae', 1, '1-14125cd10283', 'idea', 'archival', 'noon-ferry', 'a second ferry could run at noon', NULL, '{kind:idea,topic:noon,topic:ferry,topic:second,topic:run,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:40.000000Z', '2026-05-01T09:00:40.000000Z', false, false, '''a'':15 ''at'':20 ''could'':18 ''en'':14C ''ferry'':2A,8C,17 ''idea'':4C ''kind'':3C ''lang'':13C ''noon'':1A,6C,21 ''run'':12C,19 ''second'':10C,16 ''topic'':5C,7C,9C,11C', '''a'':11 ''at'':16 ''could'':14 ''ferri'':2A,6C,13 ''noon'':1A,4C,17 ''run'':10C,15 ''second'':8C,12 ''topic'':3C,5C,7C,9C', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "en": [0, 0, 0, 1], "run": [0, 0, 1, 1], "idea": [0, 0, 0, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "noon": [1, 0, 1, 1], "could": [0, 0, 1, 0], "ferry": [1, 0, 1, 1], "topic": [0, 0, 0, 4], "second": [0, 0, 1, 1]}', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "run": [0, 0, 1, 1], "noon": [1, 0, 1, 1], "could": [0, 0, 1, 0], "ferri": [1, 0, 1, 1], "topic": [0, 0, 0, 4], "second": [0, 0, 1, 1]}', 39, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (2, '019de2c4-5190-7419-b585-65f269bc4209', 3, '3-f58322e11489', 'episode', 'operational', 'tide', 'the tide turns at eight in summer and at seven in winter', 'tide table', '{kind:observation,topic:tide,topic:turns,topic:eight,topic:summer,topic:seven,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:10.000000Z', '2026-05-01T09:02:30.000000Z', false, false, '''and'':25 ''at'':21 ''eight'':9C,22 ''en'':15C ''in'':23 ''kind'':2C ''lang'':14C ''observation'':3C ''seven'':13C,27 ''summer'':11C,24 ''table'':17B ''the'':18 ''tide'':1A,5C,16B,19 ''topic'':4C,6C,8C,10C,12C ''turns'':7C,20 ''winter'':29', '''and'':21 ''at'':17 ''eight'':7C,18 ''in'':19 ''seven'':11C,23 ''summer'':9C,20 ''tabl'':13B ''the'':14 ''tide'':1A,3C,12B,15 ''topic'':2C,4C,6C,8C,10C ''turn'':5C,16 ''winter'':25', '{"at": [0, 0, 2, 0], "en": [0, 0, 0, 1], "in": [0, 0, 2, 0], "and": [0, 0, 1, 0], "the": [0, 0, 1, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "tide": [1, 1, 1, 1], "eight": [0, 0, 1, 1], "seven": [0, 0, 1, 1], "table": [0, 1, 0, 0], "topic": [0, 0, 0, 5], "turns": [0, 0, 1, 1], "summer": [0, 0, 1, 1], "winter": [0, 0, 1, 0], "observation": [0, 0, 0, 1]}', '{"at": [0, 0, 2, 0], "in": [0, 0, 2, 0], "and": [0, 0, 1, 0], "the": [0, 0, 1, 0], "tabl": [0, 1, 0, 0], "tide": [1, 1, 1, 1], "turn": [0, 0, 1, 1], "eight": [0, 0, 1, 1], "seven": [0, 0, 1, 1], "topic": [0, 0, 0, 5], "summer": [0, 0, 1, 1], "winter": [0, 0, 1, 0]}', 55, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (7, '019de2c6-e9a0-73d3-b3ff-2de2065e5d3d', 1, '1-a53b344b47bd', 'idea', 'archival', 'one-ferry', 'a second ferry runs at one', NULL, '{kind:idea,topic:one,topic:ferry,topic:second,topic:runs,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:03:00.000000Z', '2026-05-01T09:03:00.000000Z', false, false, '''a'':15 ''at'':19 ''en'':14C ''ferry'':2A,8C,17 ''idea'':4C ''kind'':3C ''lang'':13C ''one'':1A,6C,20 ''runs'':12C,18 ''second'':10C,16 ''topic'':5C,7C,9C,11C', '''a'':11 ''at'':15 ''ferri'':2A,6C,13 ''one'':1A,4C,16 ''run'':10C,14 ''second'':8C,12 ''topic'':3C,5C,7C,9C', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "en": [0, 0, 0, 1], "one": [1, 0, 1, 1], "idea": [0, 0, 0, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "runs": [0, 0, 1, 1], "ferry": [1, 0, 1, 1], "topic": [0, 0, 0, 4], "second": [0, 0, 1, 1]}', '{"a": [0, 0, 1, 0], "at": [0, 0, 1, 0], "one": [1, 0, 1, 1], "run": [0, 0, 1, 1], "ferri": [1, 0, 1, 1], "topic": [0, 0, 0, 4], "second": [0, 0, 1, 1]}', 37, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (6, '019de2c4-edd0-7846-b225-58ca7adbdcb1', 2, '2-31348cb2619b', 'episode', 'operational', 'rope', 'buy more rope for the winter moorings', NULL, '{kind:jot,topic:rope,topic:buy,topic:winter,topic:moorings,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:50.000000Z', '2026-05-01T09:05:30.000000Z', true, false, NULL, NULL, NULL, NULL, NULL, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (8, '019de2c7-10b0-70e3-bc1d-96438c566177', 2, '2-9ba1e6cc055c', 'hypothesis', 'operational', 'the-crane-lifts-twelve-tonnes-566177', 'the crane lifts twelve tonnes', NULL, '{kind:claim,topic:crane,topic:lifts,topic:twelve,topic:tonnes,lang:en,status:refuted}', 'warm', 'local', 'refuted', '{}', '{1}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:20.000000Z', false, false, '''claim'':2C ''crane'':4C,16 ''en'':12C ''kind'':1C ''lang'':11C ''lifts'':6C,17 ''refuted'':14C ''status'':13C ''the'':15 ''tonnes'':10C,19 ''topic'':3C,5C,7C,9C ''twelve'':8C,18', '''crane'':2C,10 ''lift'':4C,11 ''the'':9 ''tonn'':8C,13 ''topic'':1C,3C,5C,7C ''twelv'':6C,12', '{"en": [0, 0, 0, 1], "the": [0, 0, 1, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "claim": [0, 0, 0, 1], "crane": [0, 0, 1, 1], "lifts": [0, 0, 1, 1], "topic": [0, 0, 0, 4], "status": [0, 0, 0, 1], "tonnes": [0, 0, 1, 1], "twelve": [0, 0, 1, 1], "refuted": [0, 0, 0, 1]}', '{"the": [0, 0, 1, 0], "lift": [0, 0, 1, 1], "tonn": [0, 0, 1, 1], "crane": [0, 0, 1, 1], "topic": [0, 0, 0, 4], "twelv": [0, 0, 1, 1]}', 33, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (9, '019de2c7-10b0-70e5-8cb5-37bb115bd447', 2, '2-7832d572e54d', 'experiment', 'operational', 'read-the-plate-5bd447', 'read the plate', NULL, '{kind:experiment,topic:read,topic:plate,lang:en}', 'warm', 'local', 'refuted', '{}', '{1}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:20.000000Z', false, false, '''en'':8C ''experiment'':2C ''kind'':1C ''lang'':7C ''plate'':6C,11 ''read'':4C,9 ''the'':10 ''topic'':3C,5C', '''plate'':4C,7 ''read'':2C,5 ''the'':6 ''topic'':1C,3C', '{"en": [0, 0, 0, 1], "the": [0, 0, 1, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "read": [0, 0, 1, 1], "plate": [0, 0, 1, 1], "topic": [0, 0, 0, 2], "experiment": [0, 0, 0, 1]}', '{"the": [0, 0, 1, 0], "read": [0, 0, 1, 1], "plate": [0, 0, 1, 1], "topic": [0, 0, 0, 2]}', 19, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (10, '019de2c7-acf0-70b5-ac64-3d9068432658', 2, '2-ce0679c1abbc', 'task', 'operational', 'paint-hull', 'paint the hull before spring', NULL, '{kind:task,boat,topic:paint,topic:hull,topic:spring,lang:en,status:done}', 'warm', 'local', 'done', '{"done_at": "2026-05-01T09:04:00.000000Z"}', '{1}', '2026-05-01T09:03:50.000000Z', '2026-05-01T09:04:00.000000Z', false, false, '''before'':19 ''boat'':5C ''done'':15C ''en'':13C ''hull'':2A,9C,18 ''kind'':3C ''lang'':12C ''paint'':1A,7C,16 ''spring'':11C,20 ''status'':14C ''task'':4C ''the'':17 ''topic'':6C,8C,10C', '''befor'':13 ''boat'':3C ''hull'':2A,7C,12 ''paint'':1A,5C,10 ''spring'':9C,14 ''the'':11 ''topic'':4C,6C,8C', '{"en": [0, 0, 0, 1], "the": [0, 0, 1, 0], "boat": [0, 0, 0, 1], "done": [0, 0, 0, 1], "hull": [1, 0, 1, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "task": [0, 0, 0, 1], "paint": [1, 0, 1, 1], "topic": [0, 0, 0, 3], "before": [0, 0, 1, 0], "spring": [0, 0, 1, 1], "status": [0, 0, 0, 1]}', '{"the": [0, 0, 1, 0], "boat": [0, 0, 0, 1], "hull": [1, 0, 1, 1], "befor": [0, 0, 1, 0], "paint": [1, 0, 1, 1], "topic": [0, 0, 0, 3], "spring": [0, 0, 1, 1]}', 35, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (11, '019de2c8-2220-70aa-863a-7a7d5eef9bdb', 1, '1-6bb15e2029b6', 'episode', 'operational', 'dock-lights', 'the dock lights are blue at night', NULL, '{kind:observation,topic:dock,topic:lights,topic:blue,topic:night,lang:en}', 'warm', 'local', NULL, '{}', '{2}', '2026-05-01T09:04:20.000000Z', '2026-05-01T09:04:20.000000Z', false, false, '''are'':18 ''at'':20 ''blue'':10C,19 ''dock'':1A,6C,16 ''en'':14C ''kind'':3C ''lang'':13C ''lights'':2A,8C,17 ''night'':12C,21 ''observation'':4C ''the'':15 ''topic'':5C,7C,9C,11C', '''are'':14 ''at'':16 ''blue'':8C,15 ''dock'':1A,4C,12 ''light'':2A,6C,13 ''night'':10C,17 ''the'':11 ''topic'':3C,5C,7C,9C', '{"at": [0, 0, 1, 0], "en": [0, 0, 0, 1], "are": [0, 0, 1, 0], "the": [0, 0, 1, 0], "blue": [0, 0, 1, 1], "dock": [1, 0, 1, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "night": [0, 0, 1, 1], "topic": [0, 0, 0, 4], "lights": [1, 0, 1, 1], "observation": [0, 0, 0, 1]}', '{"at": [0, 0, 1, 0], "are": [0, 0, 1, 0], "the": [0, 0, 1, 0], "blue": [0, 0, 1, 1], "dock": [1, 0, 1, 1], "light": [1, 0, 1, 1], "night": [0, 0, 1, 1], "topic": [0, 0, 0, 4]}', 39, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (12, '019de2c8-9750-71d3-9434-785ee1dfec5a', 2, '2-91b9e9a02be5', 'episode', 'operational', 'gulls', 'the gulls nest on the harbour roof', NULL, '{kind:observation,topic:gulls,topic:nest,topic:harbour,topic:roof,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:04:50.000000Z', '2026-05-01T09:05:20.000000Z', false, false, '''en'':13C ''gulls'':1A,5C,15 ''harbour'':9C,19 ''kind'':2C ''lang'':12C ''nest'':7C,16 ''observation'':3C ''on'':17 ''roof'':11C,20 ''the'':14 ''topic'':4C,6C,8C,10C', '''gull'':1A,3C,11 ''harbour'':7C,15 ''nest'':5C,12 ''on'':13 ''roof'':9C,16 ''the'':10 ''topic'':2C,4C,6C,8C', '{"en": [0, 0, 0, 1], "on": [0, 0, 1, 0], "the": [0, 0, 2, 0], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "nest": [0, 0, 1, 1], "roof": [0, 0, 1, 1], "gulls": [1, 0, 1, 1], "topic": [0, 0, 0, 4], "harbour": [0, 0, 1, 1], "observation": [0, 0, 0, 1]}', '{"on": [0, 0, 1, 0], "the": [0, 0, 2, 0], "gull": [1, 0, 1, 1], "nest": [0, 0, 1, 1], "roof": [0, 0, 1, 1], "topic": [0, 0, 0, 4], "harbour": [0, 0, 1, 1]}', 37, NULL, 'agent');
INSERT INTO public.nodes (seq, id, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, tsv, stv, ltf, stf, dl, request_id, actor) VALUES (13, '019de2c8-be60-723c-b0cc-921139503039', 2, '2-280772c64168', 'episode', 'operational', 'fog', 'the fog rolls in at dawn', NULL, '{kind:observation,topic:fog,topic:rolls,topic:dawn,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:05:00.000000Z', '2026-05-01T09:05:20.000000Z', false, false, '''at'':16 ''dawn'':9C,17 ''en'':11C ''fog'':1A,5C,13 ''in'':15 ''kind'':2C ''lang'':10C ''observation'':3C ''rolls'':7C,14 ''the'':12 ''topic'':4C,6C,8C', '''at'':12 ''dawn'':7C,13 ''fog'':1A,3C,9 ''in'':11 ''roll'':5C,10 ''the'':8 ''topic'':2C,4C,6C', '{"at": [0, 0, 1, 0], "en": [0, 0, 0, 1], "in": [0, 0, 1, 0], "fog": [1, 0, 1, 1], "the": [0, 0, 1, 0], "dawn": [0, 0, 1, 1], "kind": [0, 0, 0, 1], "lang": [0, 0, 0, 1], "rolls": [0, 0, 1, 1], "topic": [0, 0, 0, 3], "observation": [0, 0, 0, 1]}', '{"at": [0, 0, 1, 0], "in": [0, 0, 1, 0], "fog": [1, 0, 1, 1], "the": [0, 0, 1, 0], "dawn": [0, 0, 1, 1], "roll": [0, 0, 1, 1], "topic": [0, 0, 0, 3]}', 31, NULL, 'agent');


--
-- Data for Name: past_revisions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (2, 1, '1-74648935923a', 'episode', 'operational', 'tide', 'the tide turns at eight in summer', NULL, '{kind:observation,topic:tide,topic:turns,topic:eight,topic:summer,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:10.000000Z', '2026-05-01T09:00:10.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (2, 2, '2-533dd1336075', 'episode', 'operational', 'tide', 'the tide turns at eight in summer and at seven in winter', NULL, '{kind:observation,topic:tide,topic:turns,topic:eight,topic:summer,topic:seven,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:10.000000Z', '2026-05-01T09:02:10.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (1, 1, '1-2907523d7a73', 'episode', 'operational', 'ferry-time', 'the ferry leaves at nine because the tide turns at eight', NULL, '{kind:decision,boat,schedule,topic:ferry,topic:time,topic:leaves,topic:nine,topic:tide,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:00.000000Z', '2026-05-01T09:00:00.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (8, 1, '1-5c9448cd8d11', 'hypothesis', 'operational', 'the-crane-lifts-twelve-tonnes-566177', 'the crane lifts twelve tonnes', NULL, '{kind:claim,status:open,topic:crane,topic:lifts,topic:twelve,topic:tonnes,lang:en}', 'warm', 'local', 'open', '{}', '{1}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (9, 1, '1-cac318acc0d2', 'experiment', 'operational', 'read-the-plate-5bd447', 'read the plate', NULL, '{kind:experiment,topic:read,topic:plate,lang:en}', 'warm', 'local', 'open', '{}', '{1}', '2026-05-01T09:03:10.000000Z', '2026-05-01T09:03:10.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (1, 2, '2-86804c9f512c', 'episode', 'operational', 'ferry-departure', 'the ferry leaves at nine because the tide turns at eight', NULL, '{kind:decision,boat,schedule,topic:ferry,topic:departure,topic:leaves,topic:nine,topic:tide,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:00.000000Z', '2026-05-01T09:02:40.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (10, 1, '1-156cd9dcd77b', 'task', 'operational', 'paint-hull', 'paint the hull before spring', NULL, '{kind:task,status:open,boat,topic:paint,topic:hull,topic:spring,lang:en}', 'warm', 'local', 'open', '{}', '{1}', '2026-05-01T09:03:50.000000Z', '2026-05-01T09:03:50.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (12, 1, '1-bec1a9ec676a', 'episode', 'operational', 'gulls', 'the gulls nest on the harbour roof', NULL, '{kind:observation,topic:gulls,topic:nest,topic:harbour,topic:roof,lang:en}', 'warm', 'local', NULL, '{}', '{3}', '2026-05-01T09:04:50.000000Z', '2026-05-01T09:04:50.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (13, 1, '1-304ec60fa4aa', 'episode', 'operational', 'fog', 'the fog rolls in at dawn', NULL, '{kind:observation,topic:fog,topic:rolls,topic:dawn,lang:en}', 'warm', 'local', NULL, '{}', '{3}', '2026-05-01T09:05:00.000000Z', '2026-05-01T09:05:00.000000Z', false, false, NULL, 'agent');
INSERT INTO public.past_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor) VALUES (6, 1, '1-a00d38f0a13a', 'episode', 'operational', 'rope', 'buy more rope for the winter moorings', NULL, '{kind:jot,topic:rope,topic:buy,topic:winter,topic:moorings,lang:en}', 'warm', 'local', NULL, '{}', '{1}', '2026-05-01T09:00:50.000000Z', '2026-05-01T09:00:50.000000Z', false, false, NULL, 'agent');


--
-- Data for Name: requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (1, 'initial', '2026-12-08T00:30:29.099057Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (2, 'stemmed_index', '2026-12-08T00:30:29.100341Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (3, 'vectors', '2026-12-08T00:30:29.101590Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (4, 'initiative_history', '2026-12-08T00:30:29.108178Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (5, 'tokens', '2026-12-08T00:30:29.109647Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (6, 'section_index', '2026-12-08T00:30:29.111334Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (7, 'rule_index', '2026-12-08T00:30:29.111813Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (8, 'forgotten_index', '2026-12-08T00:30:29.112238Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (9, 'term_stats', '2026-12-08T00:30:29.116638Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (10, 'vector_arrays', '2026-12-08T00:30:29.117696Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (11, 'past_revisions', '2026-12-08T00:30:29.118663Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (12, 'fewer_btrees', '2026-12-08T00:30:29.118971Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (13, 'text_changes', '2026-12-08T00:30:29.121061Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (14, 'section_counts', '2026-12-08T00:30:29.123358Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (15, 'unspaced_scripts', '2026-12-08T00:30:29.129323Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (16, 'marked_scripts', '2026-12-08T00:30:29.129712Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (17, 'term_stats', '2026-12-08T00:30:29.132658Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (18, 'one_membership_btree', '2026-12-08T00:30:29.133749Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (19, 'packed_replay', '2026-12-08T00:30:29.135217Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (20, 'attention_statistics', '2026-12-08T00:30:29.135977Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (21, 'token_expiry_link_actors', '2026-12-08T00:30:29.136278Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (22, 'link_actors_backfill', '2026-12-08T00:30:29.137306Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (23, 'one_character_words', '2026-12-08T00:30:29.137824Z');
INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (24, 'vector_changes', '2026-12-08T00:30:29.138871Z');


--
-- Data for Name: section_counts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.section_counts (initiative_id, facet, shard, members) VALUES (1, 'archival:warm', 18, 3);
INSERT INTO public.section_counts (initiative_id, facet, shard, members) VALUES (1, 'operational:cold', 18, 1);
INSERT INTO public.section_counts (initiative_id, facet, shard, members) VALUES (2, 'operational:warm', 18, 1);
INSERT INTO public.section_counts (initiative_id, facet, shard, members) VALUES (3, 'operational:warm', 18, 0);
INSERT INTO public.section_counts (initiative_id, facet, shard, members) VALUES (1, 'operational:warm', 18, 7);


--
-- Data for Name: slot_revisions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.slot_revisions (initiative_id, slot, rev_no, node_id, revision, updated_at) VALUES (1, 'handoff', 1, '019de2c4-2a80-706c-9af7-5abc7f35fb02', '1-15443141b8b1', '2026-05-01T09:03:30.000000Z');
INSERT INTO public.slot_revisions (initiative_id, slot, rev_no, node_id, revision, updated_at) VALUES (1, 'handoff', 2, '019de2c4-5190-7419-b585-65f269bc4209', '2-4beb93278f8f', '2026-05-01T09:03:40.000000Z');


--
-- Data for Name: slots; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.slots (initiative_id, slot, node_id, rev_no, revision, updated_at) VALUES (1, 'handoff', '019de2c4-5190-7419-b585-65f269bc4209', 2, '2-4beb93278f8f', '2026-05-01T09:03:40.000000Z');


--
-- Data for Name: term_stats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('becaus', 4, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('because', 4, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('decision', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('eight', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('leav', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('leaves', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('nine', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('schedul', 8, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('schedule', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tide', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('turn', 4, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('turns', 4, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lang', 8, 18, 12, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('eight', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tonn', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tonnes', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('moor', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('summer', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('twelv', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('twelve', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('turn', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('turns', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('nest', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('refuted', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('moorings', 12, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('befor', 4, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('before', 4, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('never', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('north', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('pier', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('rule', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('storm', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('boat', 8, 18, 2, 2);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('more', 4, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('12', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('crane', 15, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('hull', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('equip', 8, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('equipment', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('handbook', 14, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('harbour', 14, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('on', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('roof', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lift', 6, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lifts', 6, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('manual', 9, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('page', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('reference', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('say', 2, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('says', 2, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('ten', 6, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('the', 6, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tonn', 6, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tonnes', 6, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('rope', 13, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('paint', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('spring', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('could', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('status', 8, 18, 2, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('task', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('the', 4, 18, 9, 9);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('at', 4, 18, 7, 7);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('done', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('noon', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('open', 8, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('are', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('topic', 8, 18, 12, 12);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('blue', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('dawn', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('dock', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('and', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('seven', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('winter', 4, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tabl', 2, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('table', 2, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tide', 13, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('tide', 15, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('departur', 9, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('departure', 9, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('time', 9, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('a', 4, 18, 3, 3);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('fog', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('ferri', 13, 18, 0, 3);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('ferry', 13, 18, 3, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('idea', 8, 18, 2, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('in', 4, 18, 3, 3);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('one', 13, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('run', 12, 18, 1, 2);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('runs', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('second', 12, 18, 2, 2);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('claim', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('crane', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('observation', 8, 18, 4, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('experiment', 8, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('roll', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('rolls', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lift', 12, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lifts', 12, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('plate', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('read', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('buy', 12, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('en', 8, 18, 12, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('light', 13, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('lights', 13, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('night', 12, 18, 1, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('for', 4, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('jot', 8, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('kind', 8, 18, 12, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('winter', 12, 18, 0, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('gull', 13, 18, 0, 1);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('gulls', 13, 18, 1, 0);
INSERT INTO public.term_stats (term, fields, shard, literal, stemmed) VALUES ('harbour', 12, 18, 1, 1);


--
-- Data for Name: text_change_horizon; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.text_change_horizon (one, horizon) VALUES (true, '0');


--
-- Data for Name: text_changes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156370', 1, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156371', 2, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156372', 3, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156373', 4, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156374', 5, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156375', 6, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156382', 2, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156384', 2, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156385', 1, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156386', 7, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156387', 8, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156387', 9, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156388', 8, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156388', 9, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156390', 1, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156391', 10, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156392', 10, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156393', 11, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156395', 12, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156396', 13, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156398', 12, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156398', 13, 'node');
INSERT INTO public.text_changes (xid, node_seq, kind) VALUES ('156399', 6, 'node');


--
-- Data for Name: text_totals; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.text_totals (shard, docs, tokens) VALUES (0, 0, 0);
INSERT INTO public.text_totals (shard, docs, tokens) VALUES (18, 12, 490);


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: audit_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_seq_seq', 28, true);


--
-- Name: initiatives_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.initiatives_id_seq', 3, true);


--
-- Name: nodes_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.nodes_seq_seq', 13, true);


--
-- Name: audit audit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit
    ADD CONSTRAINT audit_pkey PRIMARY KEY (seq);


--
-- Name: cursors cursors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.cursors
    ADD CONSTRAINT cursors_pkey PRIMARY KEY (id);


--
-- Name: edge_revisions edge_revisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.edge_revisions
    ADD CONSTRAINT edge_revisions_pkey PRIMARY KEY (src, dst, edge_type, rev_no);


--
-- Name: edges edges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.edges
    ADD CONSTRAINT edges_pkey PRIMARY KEY (src, dst, edge_type);


--
-- Name: initiative_ends initiative_ends_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.initiative_ends
    ADD CONSTRAINT initiative_ends_pkey PRIMARY KEY (initiative_id);


--
-- Name: initiative_names initiative_names_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.initiative_names
    ADD CONSTRAINT initiative_names_pkey PRIMARY KEY (initiative_id, valid_from);


--
-- Name: initiatives initiatives_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.initiatives
    ADD CONSTRAINT initiatives_name_key UNIQUE (name);


--
-- Name: initiatives initiatives_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.initiatives
    ADD CONSTRAINT initiatives_pkey PRIMARY KEY (id);


--
-- Name: memberships memberships_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (initiative_id, facet, node_seq);


--
-- Name: meta meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.meta
    ADD CONSTRAINT meta_pkey PRIMARY KEY (key);


--
-- Name: past_revisions node_revisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.past_revisions
    ADD CONSTRAINT node_revisions_pkey PRIMARY KEY (node_seq, rev_no);


--
-- Name: node_vectors node_vectors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.node_vectors
    ADD CONSTRAINT node_vectors_pkey PRIMARY KEY (node_id, model);


--
-- Name: nodes nodes_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_id_key UNIQUE (id);


--
-- Name: nodes nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_pkey PRIMARY KEY (seq);


--
-- Name: requests requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.requests
    ADD CONSTRAINT requests_pkey PRIMARY KEY (initiative, operation, request_id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: section_counts section_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.section_counts
    ADD CONSTRAINT section_counts_pkey PRIMARY KEY (initiative_id, facet, shard);


--
-- Name: slot_revisions slot_revisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slot_revisions
    ADD CONSTRAINT slot_revisions_pkey PRIMARY KEY (initiative_id, slot, rev_no);


--
-- Name: slots slots_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slots
    ADD CONSTRAINT slots_pkey PRIMARY KEY (initiative_id, slot);


--
-- Name: term_stats term_stats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.term_stats
    ADD CONSTRAINT term_stats_pkey PRIMARY KEY (term, fields, shard);


--
-- Name: text_change_horizon text_change_horizon_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.text_change_horizon
    ADD CONSTRAINT text_change_horizon_pkey PRIMARY KEY (one);


--
-- Name: text_totals text_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.text_totals
    ADD CONSTRAINT text_totals_pkey PRIMARY KEY (shard);


--
-- Name: tokens tokens_digest_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_digest_key UNIQUE (digest);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (name);


--
-- Name: audit_initiative; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_initiative ON public.audit USING btree (initiative_id, seq);


--
-- Name: cursors_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX cursors_created ON public.cursors USING btree (created_at);


--
-- Name: edge_revisions_dst; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX edge_revisions_dst ON public.edge_revisions USING btree (dst, recorded_at);


--
-- Name: edge_revisions_src; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX edge_revisions_src ON public.edge_revisions USING btree (src, recorded_at);


--
-- Name: edges_contradicts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX edges_contradicts ON public.edges USING btree (dst) WHERE ((edge_type = 'contradicts'::text) AND (NOT retracted));


--
-- Name: edges_dst; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX edges_dst ON public.edges USING btree (dst, edge_type);


--
-- Name: edges_supersedes; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX edges_supersedes ON public.edges USING btree (dst, src) WHERE ((edge_type = 'supersedes'::text) AND (NOT retracted));


--
-- Name: memberships_node; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memberships_node ON public.memberships USING btree (node_seq);


--
-- Name: node_revisions_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX node_revisions_time ON public.past_revisions USING btree (node_seq, recorded_at);


--
-- Name: nodes_attention; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_attention ON public.nodes USING btree (seq) WHERE ((NOT retracted) AND ((strpos(properties, '"reminder"'::text) > 0) OR (strpos(properties, '"hygiene"'::text) > 0)));


--
-- Name: nodes_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_created ON public.nodes USING btree (created_at, seq);


--
-- Name: nodes_forgotten; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_forgotten ON public.nodes USING btree (id) WHERE retracted;


--
-- Name: nodes_live_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_live_name ON public.nodes USING btree (name) WHERE (NOT retracted);


--
-- Name: nodes_rules; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_rules ON public.nodes USING btree (seq) WHERE ((NOT retracted) AND (node_type = 'concept'::text) AND ('kind:rule'::text = ANY (tags)));


--
-- Name: nodes_stv; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_stv ON public.nodes USING gin (stv);


--
-- Name: nodes_tags; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_tags ON public.nodes USING gin (tags);


--
-- Name: nodes_tsv; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_tsv ON public.nodes USING gin (tsv);


--
-- Name: nodes_type_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_type_seq ON public.nodes USING btree (node_type, seq);


--
-- Name: slots_holder; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX slots_holder ON public.slots USING btree (node_id);


--
-- Name: text_changes_xid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX text_changes_xid ON public.text_changes USING btree (xid);


--
-- Name: nodes_hygiene_stats; Type: STATISTICS; Schema: public; Owner: -
--

CREATE STATISTICS public.nodes_hygiene_stats ON strpos(properties, '"hygiene"'::text) FROM public.nodes;


--
-- Name: nodes_reminder_stats; Type: STATISTICS; Schema: public; Owner: -
--

CREATE STATISTICS public.nodes_reminder_stats ON strpos(properties, '"reminder"'::text) FROM public.nodes;


--
-- Name: memberships memberships_section_counts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memberships_section_counts AFTER INSERT OR DELETE OR UPDATE OF initiative_id, facet ON public.memberships FOR EACH ROW EXECUTE FUNCTION public.kaeru_section_counts();


--
-- Name: node_vectors node_vectors_text_changes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER node_vectors_text_changes AFTER INSERT OR UPDATE ON public.node_vectors FOR EACH ROW EXECUTE FUNCTION public.kaeru_vector_change();


--
-- Name: nodes nodes_term_stats; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER nodes_term_stats AFTER INSERT OR DELETE OR UPDATE OF ltf, stf, dl ON public.nodes FOR EACH ROW EXECUTE FUNCTION public.kaeru_term_stats();


--
-- Name: nodes nodes_text_changes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER nodes_text_changes AFTER INSERT OR UPDATE ON public.nodes FOR EACH ROW EXECUTE FUNCTION public.kaeru_text_change();


--
-- PostgreSQL database dump complete
--


