package plan

import "encoding/json"

// The hand decoders of what dispatch reads: the index's event files and
// tool buckets, and the grants with what they bind. Each reads its bytes
// as encoding/json would, or fails (see reader); decodeJSON then leaves
// them to encoding/json.

// decodeJSON decodes data into v, an *EventFile, a *bucket or a
// *grantFile, by hand where the reader can and with encoding/json where it
// cannot or v is of another type.
func decodeJSON(data []byte, v any) error {
	r := &reader{b: data}
	switch v := v.(type) {
	case *EventFile:
		var ef EventFile
		if r.eventFile(&ef); r.ok() {
			*v = ef
			return nil
		}
	case *bucket:
		var b bucket
		if r.bucket(&b); r.ok() {
			*v = b
			return nil
		}
	}
	return json.Unmarshal(data, v)
}

func (r *reader) eventFile(ef *EventFile) {
	r.fields(func(k string) bool {
		switch k {
		case "schema":
			ef.Schema = r.integer()
		case "provider":
			ef.Provider = r.text()
		case "version":
			ef.Version = r.text()
		case "event":
			ef.Event = r.text()
		case "native":
			r.native(&ef.Native)
		case "hooks":
			ef.Hooks = r.hooks()
		case "tools":
			ef.Tools = r.strings()
		default:
			return false
		}
		return true
	})
}

func (r *reader) bucket(b *bucket) {
	r.fields(func(k string) bool {
		switch k {
		case "schema":
			b.Schema = r.integer()
		case "tool":
			b.Tool = r.text()
		case "hooks":
			b.Hooks = r.hooks()
		default:
			return false
		}
		return true
	})
}

func (r *reader) native(n *Native) {
	r.fields(func(k string) bool {
		switch k {
		case "harness":
			n.Harness = r.text()
		case "event":
			n.Event = r.text()
		case "fields":
			n.Fields = []Field{}
			if !r.array(func() {
				var f Field
				r.fields(func(k string) bool {
					switch k {
					case "field":
						f.Field = r.text()
					case "key":
						f.Key = r.text()
					case "type":
						f.Type = r.text()
					default:
						return false
					}
					return true
				})
				n.Fields = append(n.Fields, f)
			}) {
				n.Fields = nil
			}
		case "actor_key":
			n.ActorKey = r.text()
		case "channels":
			n.Channels = r.channels()
		case "undelivered":
			n.Undelivered = r.stringMap()
		default:
			return false
		}
		return true
	})
}

func (r *reader) channels() map[string]Output {
	return readMap(r, func() (o Output) {
		r.fields(func(k string) bool {
			switch k {
			case "stdout":
				if r.peek() != '{' && !r.lit("null") {
					r.fail() // encoding/json's error, for a map
				} else if r.peek() == '{' {
					o.Stdout, _ = r.value(0).(map[string]any)
				}
			case "stderr":
				o.Stderr = r.text()
			case "exit":
				o.Exit = r.integer()
			case "user_only":
				o.UserOnly = r.boolean()
			default:
				return false
			}
			return true
		})
		return o
	})
}

func (r *reader) hooks() []PlannedHook {
	hs := []PlannedHook{}
	if !r.array(func() {
		hs = append(hs, PlannedHook{})
		r.hook(&hs[len(hs)-1])
	}) {
		return nil
	}
	return hs
}

func (r *reader) hook(h *PlannedHook) {
	r.fields(func(k string) bool {
		switch k {
		case "package":
			h.Package = r.text()
		case "hook":
			h.Hook = r.text()
		case "subject":
			h.Subject = r.text()
		case "phase":
			h.Phase = r.text()
		case "effect":
			h.Effect = r.text()
		case "requirement":
			h.Requirement = r.text()
		case "tool_names":
			h.ToolNames = r.strings()
		case "timeout_ms":
			h.TimeoutMS = r.integer()
		case "failure_policy":
			h.FailurePolicy = r.text()
		case "error_visibility":
			h.ErrorVisibility = r.text()
		case "bindings":
			h.Bindings = r.bindings()
		case "tool_grant":
			r.grantRef(&h.ToolGrant)
		case "hook_grant":
			r.grantRef(&h.HookGrant)
		case "tool":
			r.tool(&h.Tool)
		default:
			return false
		}
		return true
	})
}

func (r *reader) bindings() []PlannedBinding {
	bs := []PlannedBinding{}
	if !r.array(func() {
		var b PlannedBinding
		r.fields(func(k string) bool {
			switch k {
			case "input":
				b.Input = r.text()
			case "field":
				b.Field = r.text()
			case "type":
				b.Type = r.text()
			default:
				return false
			}
			return true
		})
		bs = append(bs, b)
	}) {
		return nil
	}
	return bs
}

func (r *reader) grantRef(g *GrantRef) {
	r.fields(func(k string) bool {
		switch k {
		case "id":
			g.ID = r.text()
		case "digest":
			g.Digest = r.text()
		default:
			return false
		}
		return true
	})
}

func (r *reader) tool(t *PlannedTool) {
	r.fields(func(k string) bool {
		switch k {
		case "id":
			t.ID = r.text()
		case "root":
			t.Root = r.text()
		case "runtime":
			t.Runtime = r.text()
		case "entry":
			t.Entry = r.text()
		case "argv":
			t.Argv = r.strings()
		case "env":
			t.Env = r.strings()
		case "inputs":
			t.Inputs = r.inputs()
		case "files":
			t.Files = r.stringMap()
		default:
			return false
		}
		return true
	})
}

func (r *reader) inputs() []PlannedInput {
	ins := []PlannedInput{}
	if !r.array(func() {
		var in PlannedInput
		r.fields(func(k string) bool {
			switch k {
			case "name":
				in.Name = r.text()
			case "type":
				in.Type = r.text()
			case "required":
				in.Required = r.boolean()
			default:
				return false
			}
			return true
		})
		ins = append(ins, in)
	}) {
		return nil
	}
	return ins
}

// DecodeGrant decodes a grant file of the ledger and what it binds, in one
// pass: the binds into a *ToolBinds for kind tool, else a *HookBinds (the
// kind the grant's id names, which the caller holds the grant's own kind
// to). Grant.Binds stays empty. It digests nothing: see Digest.
func DecodeGrant(data []byte, kind string) (*Grant, any, error) {
	r := &reader{b: data}
	if g, binds := r.grant(kind); r.ok() {
		return g, binds, nil
	}
	var g Grant
	var binds any = new(ToolBinds)
	if kind == GrantHook {
		binds = new(HookBinds)
	}
	if err := json.Unmarshal(data, &struct {
		*Grant
		Binds any `json:"binds"` // shadows Grant.Binds
	}{&g, binds}); err != nil {
		return nil, nil, err
	}
	return &g, binds, nil
}

// grant reads a grant and its binds, of kind, as DecodeGrant.
func (r *reader) grant(kind string) (*Grant, any) {
	var g Grant
	var tb ToolBinds
	var hb HookBinds
	r.fields(func(k string) bool {
		switch k {
		case "schema":
			g.Schema = r.integer()
		case "id":
			g.ID = r.text()
		case "digest":
			g.Digest = r.text()
		case "kind":
			g.Kind = r.text()
		case "provider":
			g.Provider = r.text()
		case "package":
			g.Package = r.text()
		case "source":
			g.Source = r.text()
		case "item":
			g.Item = r.text()
		case "approved_at":
			g.ApprovedAt = r.text()
		case "binds":
			if kind == GrantHook {
				r.hookBinds(&hb)
			} else {
				r.toolBinds(&tb)
			}
		default:
			return false
		}
		return true
	})
	if kind == GrantHook {
		return &g, &hb
	}
	return &g, &tb
}

func (r *reader) pkg(p *PackageIdentity) {
	r.fields(func(k string) bool {
		switch k {
		case "source":
			p.Source = r.text()
		case "name":
			p.Name = r.text()
		case "id":
			p.ID = r.text()
		default:
			return false
		}
		return true
	})
}

func (r *reader) toolBinds(b *ToolBinds) {
	r.fields(func(k string) bool {
		switch k {
		case "package":
			r.pkg(&b.Package)
		case "tool":
			b.Tool = r.text()
		case "runtime":
			b.Runtime = r.text()
		case "entry":
			b.Entry = r.text()
		case "argv":
			b.Argv = r.strings()
		case "env":
			b.Env = r.strings()
		case "cwd":
			b.Cwd = r.text()
		case "inputs":
			b.Inputs = r.inputs()
		case "capabilities":
			b.Capabilities = r.strings()
		case "platforms":
			b.Platforms = r.strings()
		case "files":
			b.Files = r.fileDigests()
		default:
			return false
		}
		return true
	})
}

func (r *reader) fileDigests() map[string]FileDigest {
	return readMap(r, func() (d FileDigest) {
		r.fields(func(k string) bool {
			switch k {
			case "sha256":
				d.SHA256 = r.text()
			case "size":
				d.Size = int64(r.integer())
			case "executable":
				d.Executable = r.boolean()
			default:
				return false
			}
			return true
		})
		return d
	})
}

func (r *reader) hookBinds(b *HookBinds) {
	r.fields(func(k string) bool {
		switch k {
		case "package":
			r.pkg(&b.Package)
		case "provider":
			b.Provider = r.text()
		case "hook":
			b.Hook = r.text()
		case "tool":
			b.Tool = r.text()
		case "tool_digest":
			b.ToolDigest = r.text()
		case "subject":
			b.Subject = r.text()
		case "phase":
			b.Phase = r.text()
		case "native_event":
			b.NativeEvent = r.text()
		case "also_events":
			b.AlsoEvents = r.strings()
		case "effect":
			b.Effect = r.text()
		case "requirement":
			b.Requirement = r.text()
		case "matcher":
			b.Matcher = r.strings()
		case "bindings":
			b.Bindings = r.bindings()
		case "timeout_ms":
			b.TimeoutMS = r.integer()
		case "failure_policy":
			b.FailurePolicy = r.text()
		case "error_visibility":
			b.ErrorVisibility = r.text()
		default:
			return false
		}
		return true
	})
}

// DecodeValue decodes data, one JSON value, as encoding/json decodes it
// into an any (objects as map[string]any, arrays as []any, numbers as
// float64), without reflection: dispatch reads a harness's payload and a
// handler's result with it. ok is false where the reader cannot say (see
// reader: a key held twice, invalid UTF-8, a lone surrogate, deep nesting,
// anything that is not JSON), and the caller then decodes with
// encoding/json, whose value or error stands.
func DecodeValue(data []byte) (v any, ok bool) {
	r := &reader{b: data}
	v = r.value(0)
	return v, r.ok()
}

// DecodeObject decodes data, one JSON object, into the values of the keys
// want asks for, each as DecodeValue decodes it; every other value is only
// checked. A harness's payload is read with it: what dispatch needs are a
// few short fields beside the tool's input, which may be a file of
// megabytes, and building that input would cost many times reading it.
// ok is false where DecodeValue's would be for the wanted values, and
// for anything that is not one JSON object or holds a wanted key twice;
// the caller then decodes with encoding/json, whose value or error
// stands.
func DecodeObject(data []byte, want func(key string) bool) (values map[string]any, ok bool) {
	r := &reader{b: data}
	if r.peek() != '{' {
		return nil, false
	}
	values = map[string]any{}
	r.members(func(k string) {
		if !want(k) {
			r.skip(1)
			return
		}
		if _, dup := values[k]; dup {
			r.fail()
		}
		values[k] = r.value(1)
	})
	return values, r.ok()
}
