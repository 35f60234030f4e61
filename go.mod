module github.com/tablo/tablo

go 1.26.8
