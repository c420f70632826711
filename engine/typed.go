package engine

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
)

// errUntyped is decoded data typedManifest does not convert.
var errUntyped = errors.New("not converted")

// typedManifest fills m from data, the manifest as go-toml decoded it
// into a map, as go-toml's decoding of the same source into a Manifest
// would: decoding it a third time (after the map and the position walk)
// cost as much again as reading it. Only what the shape check admits is
// converted, a key to the field its tag names exactly; anything else (a
// key named in another case, a value of another type, an integer out of
// range) returns errUntyped and the caller decodes the source.
// TestTypedManifestAgrees holds it to go-toml.
func typedManifest(data map[string]any, m *Manifest) error {
	return fillStruct(reflect.ValueOf(m).Elem(), data)
}

// fieldIndex is, per struct type, the field each toml tag names.
var fieldIndex sync.Map // reflect.Type → map[string]int

func tomlFields(t reflect.Type) map[string]int {
	if f, ok := fieldIndex.Load(t); ok {
		return f.(map[string]int)
	}
	f := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" {
			f[name] = i
		}
	}
	fieldIndex.Store(t, f)
	return f
}

func fillStruct(v reflect.Value, data map[string]any) error {
	fields := tomlFields(v.Type())
	for k, x := range data {
		i, ok := fields[k]
		if !ok {
			return errUntyped // go-toml would try other cases, or ignore it
		}
		if err := fill(v.Field(i), x); err != nil {
			return err
		}
	}
	return nil
}

func fill(v reflect.Value, x any) error {
	switch v.Kind() {
	case reflect.String:
		s, ok := x.(string)
		if !ok {
			return errUntyped
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return errUntyped
		}
		v.SetBool(b)
	case reflect.Int:
		n, ok := x.(int64)
		if !ok || n < math.MinInt || n > math.MaxInt {
			return errUntyped
		}
		v.SetInt(n)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := fill(p.Elem(), x); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return errUntyped
		}
		return fillStruct(v, m)
	case reflect.Slice:
		xs, ok := x.([]any)
		if !ok {
			return errUntyped
		}
		s := reflect.MakeSlice(v.Type(), len(xs), len(xs))
		for i, e := range xs {
			if err := fill(s.Index(i), e); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Map:
		m, ok := x.(map[string]any)
		if !ok || v.Type() != reflect.TypeOf(m) {
			return errUntyped
		}
		v.Set(reflect.ValueOf(m))
	default:
		return errUntyped
	}
	return nil
}
